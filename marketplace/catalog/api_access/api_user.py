"""The marketplace's API user at the platform: its stored token (encrypted in the vault),
its state, and the switch to "needs sign-in" when the platform answers 401.

Every catalog call to the Authentication or Platform API goes through ``platform_api()``:
it refuses to start while the access is not active (catalog work waits instead of
failing call after call), and turns a 401 into "needs sign-in" plus a notice to staff.
The two-step sign-in that stores the token is ``sign_in.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone

from marketplace.catalog.api_access.emails import staff_notify_needs_sign_in
from marketplace.catalog.errors import ApiAccessNeeded
from marketplace.catalog.models import PlatformApiAccess
from marketplace.platform.auth_api import AuthApi
from marketplace.platform.content import GROUP as CONTENT_GROUP
from marketplace.platform.content import ContentApi
from marketplace.platform.edrts import GROUP as EDRTS_GROUP
from marketplace.platform.edrts import EdrtsClient
from marketplace.platform.errors import PlatformAuthError, PlatformError
from marketplace.platform.exports import ExportsApi
from marketplace.platform.imports import ImportsApi
from marketplace.platform.transport import ApiKeyTransport
from sellers.signals import ciphertext_lost

logger = logging.getLogger(__name__)

ACCESS_PK = 1


KEY_LOST_REASON = (
    "The stored API token cannot be decrypted with the configured keys "
    "(TOKEN_ENCRYPTION_KEYS): sign in again."
)


def access_get() -> PlatformApiAccess:
    """The access row; a token no configured key decrypts (a key lost) turns it to
    "needs sign-in" here, so no page or worker meets the undecryptable token."""
    access, _ = PlatformApiAccess.objects.get_or_create(pk=ACCESS_PK)
    if access.token_ciphertext and not access.token_decryptable:
        access_key_lost()
        access.refresh_from_db()
    return access


def access_key_lost() -> bool:
    """The stored token cannot be decrypted: access → needs sign-in (staff told once), the
    dead ciphertext dropped. Returns whether the state changed."""
    access = PlatformApiAccess.objects.filter(pk=ACCESS_PK).first()
    if access is None or not access.token_ciphertext or access.token_decryptable:
        return False
    changed = access_mark_needs_sign_in(
        token_ciphertext=access.token_ciphertext, reason=KEY_LOST_REASON
    )
    PlatformApiAccess.objects.filter(pk=ACCESS_PK, token_ciphertext=access.token_ciphertext).update(
        token_ciphertext=""
    )
    return changed


@receiver(ciphertext_lost, sender=PlatformApiAccess)
def _api_token_lost(sender: type[PlatformApiAccess], pks: list[int], **kwargs: object) -> None:
    """The key rotation found the API token undecryptable."""
    access_key_lost()


def access_mark_needs_sign_in(*, token_ciphertext: str, reason: str) -> bool:
    """The platform refused this token: access → needs sign-in, staff told (once).

    Conditional on the token that failed: a 401 for an old token that arrives after
    someone signed in again must not undo the new sign-in.
    """
    now = timezone.now()
    changed = PlatformApiAccess.objects.filter(
        pk=ACCESS_PK, state=PlatformApiAccess.State.ACTIVE, token_ciphertext=token_ciphertext
    ).update(
        state=PlatformApiAccess.State.NEEDS_SIGN_IN,
        needs_sign_in_since=now,
        last_error=reason[:500],
    )
    if changed:
        logger.warning("platform API access needs sign-in: %s", reason)
        transaction.on_commit(lambda: staff_notify_needs_sign_in(reason=reason))
    return bool(changed)


@dataclass
class PlatformApi:
    auth: AuthApi
    exports: ExportsApi
    imports: ImportsApi
    edrts: EdrtsClient
    content: ContentApi


@contextmanager
def platform_api(*, hold_wait: float = 0.0, seller_id: int | None = None) -> Iterator[PlatformApi]:
    """The Authentication and Platform API clients with the stored token.

    Raises ``ApiAccessNeeded`` before any call when nobody is signed in, and after a 401
    (the access is then marked "needs sign-in").
    """
    access = access_get()
    if not access.is_active:
        raise ApiAccessNeeded(
            "The marketplace's platform API user needs to sign in (staff: Platform API access)."
        )
    transport = ApiKeyTransport(
        token=access.token, api_user=access.username, hold_wait=hold_wait, seller_id=seller_id
    )
    # EDRTS: its own base, and its own embargo and budget (the platform limits the group
    # apart from the Platform API's).
    edrts_transport = ApiKeyTransport(
        base_url=settings.PLATFORM_EDRTS_BASE_URL,
        token=access.token,
        api_user=access.username,
        hold_wait=hold_wait,
        seller_id=seller_id,
        group=EDRTS_GROUP,
        rate_per_second=settings.EDRTS_RATE_PER_SECOND,
    )
    # The Content API: the Platform API's base, its own group (limited apart).
    content_transport = ApiKeyTransport(
        token=access.token,
        api_user=access.username,
        hold_wait=hold_wait,
        seller_id=seller_id,
        group=CONTENT_GROUP,
    )
    try:
        yield PlatformApi(
            auth=AuthApi(transport),
            exports=ExportsApi(transport),
            imports=ImportsApi(transport),
            edrts=EdrtsClient(edrts_transport),
            content=ContentApi(content_transport),
        )
    except PlatformAuthError as exc:
        access_mark_needs_sign_in(
            token_ciphertext=access.token_ciphertext,
            reason=f"The platform refused the API token: {exc.message}",
        )
        raise ApiAccessNeeded(
            "The platform no longer accepts the marketplace's API token: "
            "staff must sign in again on the Platform API access page."
        ) from exc
    PlatformApiAccess.objects.filter(pk=ACCESS_PK).update(last_checked_at=timezone.now())


def access_check() -> PlatformApiAccess:
    """One cheap authenticated call (the account list) to see whether the token works."""
    try:
        with platform_api() as api:
            api.auth.accounts()
    except ApiAccessNeeded:
        pass
    except PlatformError as exc:
        PlatformApiAccess.objects.filter(pk=ACCESS_PK).update(last_error=str(exc)[:500])
    return access_get()
