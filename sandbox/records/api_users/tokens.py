"""API tokens: issued by the second login call, sent in ``x-api-key``, revoked by control
call (our choice: no expiry otherwise, as the contract's "reused until it stops working")."""

import secrets

from sandbox.common import clock
from sandbox.common.secrets_hashing import token_hash
from sandbox.records.api_users.models import PlatformToken, PlatformUser


def token_issue(*, user: PlatformUser, name: str) -> str:
    """A new token for ``user``; the database keeps only its hash."""
    raw = secrets.token_hex(24)
    PlatformToken.objects.create(
        user=user, name=name, token_hash=token_hash(raw), created_at=clock.now()
    )
    return raw


def token_find(raw: str) -> PlatformToken | None:
    """The token with this value, revoked or not (None for an unknown value)."""
    if not raw:
        return None
    return PlatformToken.objects.select_related("user").filter(token_hash=token_hash(raw)).first()


def tokens_revoke(*, username: str | None = None, token_name: str | None = None) -> int:
    """Revoke the active tokens of a user and/or with a name; how many were revoked."""
    rows = PlatformToken.objects.filter(revoked_at__isnull=True)
    if username:
        rows = rows.filter(user__username=username)
    if token_name is not None:
        rows = rows.filter(name=token_name)
    return rows.update(revoked_at=clock.now())
