"""Authorization codes, grants and tokens: the OAuth server's bookkeeping.

Codes are single-use and live 5 minutes; access tokens 1 hour; refresh tokens 1 year.
Refresh-token rotation is on by default: spending a rotated token again counts as reuse
and revokes the whole grant (RFC 9700 section 4.14.2). The reference is silent on reuse;
under reading B of ``refresh_reuse`` a spent token presented again within
``REUSE_GRACE`` of its spending, while its successor was never presented (the answer
that carried the successor was lost), is exchanged again instead: the unused successor
is spent and a new pair issued (a "reuse interval", as several OAuth servers keep).
"""

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F

from sandbox.common import clock, switches, violations
from sandbox.common.secrets_hashing import new_token, token_hash
from sandbox.records.orders.models import AuthorizationCode, Client, Grant, Seller, Token

CODE_LIFETIME = timedelta(minutes=5)
ACCESS_LIFETIME = timedelta(hours=1)
REFRESH_LIFETIME = timedelta(days=365)
# Reading B of refresh_reuse: how long a spent refresh token may be presented again.
REUSE_GRACE = timedelta(seconds=60)

_counter_lock = threading.Lock()
counters: dict[str, int] = {}


def count(key: str) -> None:
    with _counter_lock:
        counters[key] = counters.get(key, 0) + 1


def counters_reset() -> None:
    with _counter_lock:
        counters.clear()


class GrantError(Exception):
    """An OAuth error answered by the token endpoint."""

    def __init__(self, error: str, description: str, status: int = 401) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status


@dataclass
class IssuedTokens:
    access_token: str
    refresh_token: str | None
    expires_in: int
    grant_id: int

    def as_response(self) -> dict:
        body: dict = {
            "access_token": self.access_token,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
        }
        if self.refresh_token is not None:
            body["refresh_token"] = self.refresh_token
        return body


def code_mint(*, client: Client, seller: Seller, redirect_url: str) -> str:
    raw = new_token("code")
    now = clock.now()
    AuthorizationCode.objects.create(
        code_hash=token_hash(raw),
        client=client,
        seller=seller,
        redirect_url=redirect_url,
        created_at=now,
        expires_at=now + CODE_LIFETIME,
    )
    return raw


def _issue(*, grant: Grant, with_refresh: bool) -> IssuedTokens:
    now = clock.now()
    access = new_token("at")
    Token.objects.create(
        token_hash=token_hash(access),
        kind=Token.ACCESS,
        grant=grant,
        created_at=now,
        expires_at=now + ACCESS_LIFETIME,
    )
    refresh = None
    if with_refresh:
        refresh = new_token("rt")
        Token.objects.create(
            token_hash=token_hash(refresh),
            kind=Token.REFRESH,
            grant=grant,
            created_at=now,
            expires_at=now + REFRESH_LIFETIME,
        )
    return IssuedTokens(
        access_token=access,
        refresh_token=refresh,
        expires_in=int(ACCESS_LIFETIME.total_seconds()),
        grant_id=grant.id,
    )


def grant_create(*, client: Client, seller: Seller) -> IssuedTokens:
    """A new grant with a fresh token pair (control API shortcut and code exchange)."""
    with transaction.atomic():
        grant = Grant.objects.create(client=client, seller=seller, created_at=clock.now())
        return _issue(grant=grant, with_refresh=True)


def code_exchange(*, client: Client, code: str, redirect_url: str | None) -> IssuedTokens:
    now = clock.now()
    with transaction.atomic():
        row = AuthorizationCode.objects.filter(code_hash=token_hash(code)).first()
        if row is None or row.client_id != client.id:
            raise GrantError("invalid_grant", "unknown authorization code")
        if row.used_at is not None:
            count("code_reuse")
            raise GrantError("invalid_grant", "authorization code already used")
        if row.expires_at <= now:
            raise GrantError("invalid_grant", "authorization code expired")
        if redirect_url is not None and redirect_url != row.redirect_url:
            raise GrantError("invalid_grant", "redirect_url does not match the authorization")
        # Conditional update: two concurrent exchanges of one code cannot both win.
        spent = AuthorizationCode.objects.filter(id=row.id, used_at__isnull=True).update(
            used_at=now
        )
        if spent != 1:
            count("code_reuse")
            raise GrantError("invalid_grant", "authorization code already used")
        grant = Grant.objects.create(client=client, seller_id=row.seller_id, created_at=now)
        AuthorizationCode.objects.filter(id=row.id).update(grant=grant)
        return _issue(grant=grant, with_refresh=True)


def grant_revoke(*, grant: Grant, reason: str) -> None:
    Grant.objects.filter(id=grant.id, revoked_at__isnull=True).update(
        revoked_at=clock.now(), revoked_reason=reason
    )


def refresh_exchange(*, client: Client, refresh_token: str, request_id: str = "") -> IssuedTokens:
    now = clock.now()
    reused: Grant | None = None
    spent: Token | None = None
    with transaction.atomic():
        row = (
            Token.objects.select_related("grant")
            .filter(token_hash=token_hash(refresh_token), kind=Token.REFRESH)
            .first()
        )
        if row is None or row.grant.client_id != client.id:
            raise GrantError("invalid_grant", "unknown refresh token")
        grant = row.grant
        rotate = switches.current.rotation_enabled
        if row.spent_at is not None and _regrant(grant=grant, spent=row, now=now):
            Grant.objects.filter(id=grant.id).update(refresh_count=F("refresh_count") + 1)
            return _issue(grant=grant, with_refresh=rotate)
        if row.spent_at is not None:
            reused, spent = grant, row
        elif grant.revoked_at is not None:
            raise GrantError("invalid_grant", "grant revoked")
        elif row.expires_at <= now:
            raise GrantError("invalid_grant", "refresh token expired")
        elif (
            rotate
            and Token.objects.filter(id=row.id, spent_at__isnull=True).update(spent_at=now) != 1
        ):
            # Lost a race with a concurrent refresh of the same token: that is reuse too.
            reused = grant
        else:
            Grant.objects.filter(id=grant.id).update(refresh_count=F("refresh_count") + 1)
            return _issue(grant=grant, with_refresh=rotate)
    _record_reuse(grant=reused, client=client, request_id=request_id, spent=spent)
    raise GrantError("invalid_grant", "refresh token already used; grant revoked")


def _successor(*, grant: Grant, spent: Token) -> Token | None:
    """The refresh token issued by the exchange that spent ``spent``."""
    return (
        Token.objects.filter(grant=grant, kind=Token.REFRESH, created_at__gte=spent.spent_at)
        .order_by("id")
        .first()
    )


def _regrant(*, grant: Grant, spent: Token, now: datetime) -> bool:
    """Reading B of ``refresh_reuse``: a spent token presented again within the grace,
    its successor never presented, is exchanged again (its successor spent now). Counted
    (``refresh_regrant``): a client that needs it lost a token answer."""
    if not switches.reading_b("refresh_reuse") or grant.revoked_at is not None:
        return False
    if spent.spent_at is None or now - spent.spent_at > REUSE_GRACE:
        return False
    successor = _successor(grant=grant, spent=spent)
    if successor is None:
        return False
    # Conditional: the successor presented meanwhile (or a second regrant) wins instead.
    if Token.objects.filter(id=successor.id, spent_at__isnull=True).update(spent_at=now) != 1:
        return False
    count("refresh_regrant")
    return True


def _reuse_story(*, grant: Grant, spent: Token | None) -> str:
    """What the grant's tokens say about how the client came to hold a spent one.

    The refresh token issued by the exchange that spent this one (its successor) tells the
    two causes apart: never presented, the answer of that exchange never reached the
    client's store (lost in flight, or the client died or rolled back before storing it);
    presented, the client held the newer token and still sent this older one."""
    if spent is None or spent.spent_at is None:
        return "two refreshes of the same token at once"
    successor = _successor(grant=grant, spent=spent)
    when = f"spent {(clock.now() - spent.spent_at).total_seconds():.1f} s before"
    if successor is None:
        return f"{when}; no successor was issued"
    if successor.spent_at is None:
        return f"{when}; its successor was never presented: that answer was never stored"
    later = (successor.spent_at - spent.spent_at).total_seconds()
    return (
        f"{when}; its successor was spent {later:.1f} s after it: the client held the newer "
        "token and sent an older one"
    )


def _record_reuse(*, grant: Grant, client: Client, request_id: str, spent: Token | None) -> None:
    story = _reuse_story(grant=grant, spent=spent)
    with transaction.atomic():
        Grant.objects.filter(id=grant.id).update(reuse_count=F("reuse_count") + 1)
        grant_revoke(grant=grant, reason="refresh_token_reuse")
    count("refresh_reuse")
    violations.violation_record(
        kind=violations.REFRESH_TOKEN_REUSE,
        seller=grant.seller.username,
        client_id=client.client_id,
        request_id=request_id,
        detail=f"a spent refresh token of grant {grant.id} was presented again ({story}); "
        "grant revoked",
    )
