"""Writes for the sellers app: onboarding, the OAuth connect flow and the token vault's
lifecycle (refresh, expiry, loss, disconnect, key rotation).

Functions that hold tokens are marked ``sensitive_variables`` so Django's error pages and
error reports never show their locals.

Concurrency rule (DESIGN.md "one writer per grant"): every change of a connection's grant
happens inside ``transaction.atomic()`` holding ``select_for_update()`` on its row, after
re-reading it. A refresh holds that lock across its HTTP call on purpose: with rotating
refresh tokens a second concurrent refresh would spend a dead token and make the platform
revoke the whole grant. The call's timeout bounds the wait.
"""

from __future__ import annotations

import hashlib
import logging
import random
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from marketplace.enqueue import task_enqueue
from marketplace.log_redaction import redact
from marketplace.platform import oauth
from marketplace.platform.errors import PlatformAuthError, PlatformError
from sellers import emails, selectors, vault
from sellers.errors import (
    AuthorizationFailed,
    ConnectionNotLive,
    OAuthStateInvalid,
    ReauthorizationRequired,
    TokenRefreshUnavailable,
)
from sellers.models import ConnectionEvent, OAuthState, PlatformConnection, Seller

logger = logging.getLogger(__name__)

# The contract: refresh tokens live one year. The token response does not say so, so the
# expiry is computed from when we received the refresh token.
REFRESH_TOKEN_LIFETIME = timedelta(days=365)
OAUTH_STATE_LIFETIME = timedelta(minutes=10)
# A forced refresh (after a 401) without a stale-token hint is skipped when the grant
# changed this recently: another caller just refreshed it.
FORCE_REFRESH_DEBOUNCE = timedelta(seconds=5)
# Spread queued refreshes so a burst of expiring tokens does not hit the platform at once.
REFRESH_JITTER_SECONDS = 30

# Started from here by name (``marketplace.enqueue``): tasks import this module.
CONNECTION_REFRESH_TASK = "sellers.tasks.connection_refresh_task"

Actor = AbstractBaseUser | AnonymousUser | None
State = PlatformConnection.State
Kind = ConnectionEvent.Kind


def _actor_id(actor: Actor) -> int | None:
    return actor.pk if actor is not None and getattr(actor, "is_authenticated", False) else None


def connection_event_record(
    *, seller_id: int, kind: str, detail: str = "", actor: Actor = None
) -> ConnectionEvent:
    # redact() is belt and braces: details are written by us and hold no secrets.
    return ConnectionEvent.objects.create(
        seller_id=seller_id, kind=kind, detail=redact(detail)[:1000], actor_id=_actor_id(actor)
    )


# --- onboarding ----------------------------------------------------------------------------


def seller_create(*, username: str, password: str, display_name: str, email: str = "") -> Seller:
    """A new user with a seller profile."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(
            username=username, password=password, email=email
        )
        return Seller.objects.create(user=user, display_name=display_name)


# --- authorization (connect / reconnect) ---------------------------------------------------


def oauth_state_hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


@dataclass(frozen=True)
class AuthorizationStart:
    url: str
    state_hash: str  # bind to the seller's session; the raw state only travels in the URL


def connection_authorization_start(*, seller: Seller, actor: Actor) -> AuthorizationStart:
    """A fresh single-use ``state`` (stored hashed) and the platform authorize URL."""
    now = timezone.now()
    state = secrets.token_urlsafe(32)
    state_hash = oauth_state_hash(state)
    # Old, unused states of this seller are useless; keep the table small.
    OAuthState.objects.filter(seller=seller, expires_at__lt=now - timedelta(days=1)).delete()
    OAuthState.objects.create(
        state_hash=state_hash, seller=seller, expires_at=now + OAUTH_STATE_LIFETIME
    )
    connection_event_record(
        seller_id=seller.id,
        kind=Kind.CONNECT_STARTED,
        detail="Sent to the platform to sign in and approve access.",
        actor=actor,
    )
    return AuthorizationStart(url=oauth.authorization_url(state=state), state_hash=state_hash)


def oauth_state_consume(*, seller: Seller, state: str, session_state_hash: str | None) -> None:
    """Accept ``state`` once: it must be ours, this seller's, this session's and fresh.

    Raises ``OAuthStateInvalid(reason)`` with reason missing / unknown / other_seller /
    replayed / expired / session_mismatch.
    """
    if not state:
        raise OAuthStateInvalid("missing")
    state_hash = oauth_state_hash(state)
    row = OAuthState.objects.filter(state_hash=state_hash).first()
    if row is None:
        raise OAuthStateInvalid("unknown")
    if row.seller_id != seller.id:
        raise OAuthStateInvalid("other_seller")
    if row.used_at is not None:
        raise OAuthStateInvalid("replayed")
    now = timezone.now()
    if row.expires_at <= now:
        raise OAuthStateInvalid("expired")
    if not session_state_hash or not secrets.compare_digest(session_state_hash, state_hash):
        raise OAuthStateInvalid("session_mismatch")
    # Conditional update: two callbacks racing with one state cannot both win.
    if OAuthState.objects.filter(id=row.id, used_at__isnull=True).update(used_at=now) != 1:
        raise OAuthStateInvalid("replayed")


_ERROR_CODE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


@sensitive_variables()
def connection_authorization_complete(
    *,
    seller: Seller,
    actor: Actor,
    state: str,
    session_state_hash: str | None,
    code: str,
    error: str,
    error_description: str = "",
) -> PlatformConnection:
    """Handle the platform's redirect back: check state, then spend the code.

    Every outcome is recorded as a ConnectionEvent. Raises ``OAuthStateInvalid`` (refuse,
    nothing stored) or ``AuthorizationFailed`` (seller denied, platform error, bad answer).
    """
    try:
        oauth_state_consume(seller=seller, state=state, session_state_hash=session_state_hash)
    except OAuthStateInvalid as exc:
        connection_event_record(
            seller_id=seller.id,
            kind=Kind.CONNECT_FAILED,
            detail=f"callback refused: state {exc.reason}",
            actor=actor,
        )
        raise
    if error:
        # Query parameters are attacker-controlled: keep only a plausible error code.
        code_name = error if _ERROR_CODE.match(error) else "unrecognised_error"
        description = error_description[:200]
        connection_event_record(
            seller_id=seller.id,
            kind=Kind.CONNECT_FAILED,
            detail=f"platform answered error={code_name}"
            + (f" ({description})" if description else ""),
            actor=actor,
        )
        raise AuthorizationFailed(code_name, denied=code_name == "access_denied")
    if not code:
        connection_event_record(
            seller_id=seller.id,
            kind=Kind.CONNECT_FAILED,
            detail="callback carried no authorization code",
            actor=actor,
        )
        raise AuthorizationFailed("missing_code")
    try:
        tokens = oauth.token_exchange_code(code=code, seller_id=seller.id)
    except PlatformError as exc:
        connection_event_record(
            seller_id=seller.id,
            kind=Kind.CONNECT_FAILED,
            detail=f"code exchange failed: {type(exc).__name__}: {exc}",
            actor=actor,
        )
        raise AuthorizationFailed(type(exc).__name__) from exc
    return connection_grant_store(seller=seller, tokens=tokens, actor=actor)


@sensitive_variables()
def connection_grant_store(
    *, seller: Seller, tokens: oauth.TokenSet, actor: Actor
) -> PlatformConnection:
    """Make ``tokens`` the seller's one grant (a reconnect replaces the old one in place)."""
    if tokens.refresh_token is None:
        raise ValueError("a new grant needs a refresh token")
    with transaction.atomic():
        PlatformConnection.objects.get_or_create(seller=seller)
        connection = PlatformConnection.objects.select_for_update().get(seller=seller)
        previous = connection.state
        now = timezone.now()
        connection.tokens_set(access_token=tokens.access_token, refresh_token=tokens.refresh_token)
        connection.state = State.CONNECTED
        connection.access_token_expires_at = now + timedelta(seconds=tokens.expires_in)
        connection.refresh_token_expires_at = now + REFRESH_TOKEN_LIFETIME
        connection.connected_at = now
        connection.last_error = ""
        connection.generation += 1
        connection.refresh_queued_at = None
        for field in selectors.WARNING_MARKERS.values():
            setattr(connection, field, None)
        connection.save()
        connection_event_record(
            seller_id=seller.id,
            kind=Kind.CONNECTED,
            actor=actor,
            detail=_connected_detail(previous),
        )
        logger.info("seller %s connected (generation %s)", seller.id, connection.generation)
        # The committed grant is all the sync needs: its next beat tick starts the seller's
        # pulls and releases the orders that waited (marketplace/sync/connect.py).
    return connection


def _connected_detail(previous: str) -> str:
    """The timeline's sentence for a new grant, by what there was before it."""
    if previous in (State.CONNECTED, State.NEEDS_REAUTH):
        return "Seller reconnected: the new authorization replaced the previous one."
    if previous == State.DISCONNECTED:
        return "Connected again after a disconnect; orders are sent to the platform."
    return "Connected for the first time; orders are sent to the platform from now on."


# --- refresh ----------------------------------------------------------------------------------


def _ensure_live(connection: PlatformConnection) -> None:
    if connection.state == State.NEEDS_REAUTH:
        raise ReauthorizationRequired(f"connection {connection.id} needs re-authorization")
    if not connection.is_live:
        raise ConnectionNotLive(f"connection {connection.id} is {connection.state}")


def _refresh_due(
    connection: PlatformConnection,
    *,
    now: datetime,
    force: bool,
    stale_token_fingerprint: str | None,
    seen_generation: int | None,
) -> bool:
    if force:
        if stale_token_fingerprint is not None:
            return vault.token_fingerprint(connection.access_token) == stale_token_fingerprint
        if seen_generation is not None:
            return connection.generation == seen_generation
        changed = max(
            (t for t in (connection.connected_at, connection.last_refreshed_at) if t),
            default=None,
        )
        return changed is None or now - changed >= FORCE_REFRESH_DEBOUNCE
    expires = connection.access_token_expires_at
    return expires is None or expires <= now + settings.TOKEN_REFRESH_WINDOW


def _connection_lose(
    connection: PlatformConnection, *, reason: str, now: datetime, actor: Actor = None
) -> None:
    """The grant is dead (platform refused it, or it lapsed): needs_reauth, tell the seller.

    Called with the row locked. Dead tokens are wiped rather than kept around.
    """
    connection.state = State.NEEDS_REAUTH
    connection.tokens_wipe()
    connection.last_error = reason[:500]
    connection.generation += 1
    connection.save()
    connection_event_record(
        seller_id=connection.seller_id, kind=Kind.NEEDS_REAUTH, detail=reason, actor=actor
    )
    logger.warning("seller %s needs re-authorization: %s", connection.seller_id, reason)
    transaction.on_commit(
        partial(emails.email_reauth_required, connection=connection, reason=reason)
    )


KEY_LOST_REASON = (
    "The stored authorization cannot be decrypted with the configured keys "
    "(TOKEN_ENCRYPTION_KEYS): the seller must connect again."
)


def connection_key_lost(*, connection_id: int) -> bool:
    """The connection's stored tokens cannot be decrypted (a key lost): a live grant goes
    to needs re-authorization and the seller is e-mailed (once: the state changes, the
    tokens are wiped, nothing retries); any other state just loses the dead ciphertext.
    Returns whether a live grant was lost."""
    with transaction.atomic():
        connection = PlatformConnection.objects.select_for_update().get(id=connection_id)
        if connection.tokens_decryptable:
            return False
        if connection.state == State.CONNECTED:
            _connection_lose(connection, reason=KEY_LOST_REASON, now=timezone.now())
            return True
        connection.tokens_wipe()
        connection.save(
            update_fields=[
                "access_token_ciphertext",
                "refresh_token_ciphertext",
                "refresh_queued_at",
                "updated_at",
            ]
        )
        return False


# What a successful refresh changes (a full save() also rewrote every other column).
_REFRESHED_FIELDS = [
    "access_token_ciphertext",
    "refresh_token_ciphertext",
    "access_token_expires_at",
    "refresh_token_expires_at",
    *selectors.WARNING_MARKERS.values(),
    "last_refreshed_at",
    "last_error",
    "refresh_queued_at",
    "generation",
    "updated_at",
]


@sensitive_variables()
def connection_refresh(
    *,
    connection_id: int,
    force: bool = False,
    stale_token_fingerprint: str | None = None,
    seen_generation: int | None = None,
    actor: Actor = None,
) -> PlatformConnection:
    """Refresh the access token unless another caller already did (row lock + re-read).

    Without ``force`` the token is refreshed only if it expires within
    ``settings.TOKEN_REFRESH_WINDOW``. ``force=True`` is for a caller whose token the
    platform just answered 401 to; to stay race-safe it should say which token failed:

    * ``stale_token_fingerprint=vault.token_fingerprint(token)`` — refresh only if the
      stored access token is still that one; or
    * ``seen_generation=connection.generation`` as read with the token.

    With neither, a forced refresh is skipped when the grant changed in the last
    ``FORCE_REFRESH_DEBOUNCE`` seconds. Either way the returned connection holds the
    current grant; read the token with ``.access_token``.

    Raises ``ConnectionNotLive`` / ``ReauthorizationRequired`` (the platform refused the
    grant: the connection is now needs_reauth and the seller was e-mailed) or
    ``TokenRefreshUnavailable`` (5xx, 429, timeout, odd answer: nothing changed, retry).
    """
    failure: Exception | None = None
    # Durable: the refresh commits on its own, never inside a caller's transaction. Nested,
    # a rollback of the caller's work after the platform answered would also undo the
    # rotated refresh token, and the next refresh would present the spent one (reuse: the
    # platform revokes the grant). Django raises at once if a caller ever nests it.
    with transaction.atomic(durable=True):
        # No select_related: the seller and user are only needed to e-mail a lost grant,
        # and the join cost a quarter of a refresh's CPU (P2 profile).
        connection = PlatformConnection.objects.select_for_update().get(id=connection_id)
        _ensure_live(connection)
        now = timezone.now()
        if not connection.tokens_decryptable:
            # A key lost (or removed before the rotation ran): the grant is unusable and
            # retrying cannot help. The seller is told once (the state changes) and
            # reconnects.
            _connection_lose(connection, reason=KEY_LOST_REASON, now=now, actor=actor)
            failure = ReauthorizationRequired(KEY_LOST_REASON)
        elif not _refresh_due(
            connection,
            now=now,
            force=force,
            stale_token_fingerprint=stale_token_fingerprint,
            seen_generation=seen_generation,
        ):
            return connection
        else:
            try:
                tokens = oauth.token_refresh(
                    refresh_token=connection.refresh_token, seller_id=connection.seller_id
                )
            except PlatformAuthError as exc:
                reason = (
                    "The platform refused to renew the authorization "
                    f"({exc.code or exc.status or 'auth'})."
                )
                _connection_lose(connection, reason=reason, now=now, actor=actor)
                failure = ReauthorizationRequired(reason)
            except PlatformError as exc:
                connection.last_error = f"{type(exc).__name__}: {exc}"[:500]
                connection.save(update_fields=["last_error", "updated_at"])
                connection_event_record(
                    seller_id=connection.seller_id,
                    kind=Kind.REFRESH_FAILED,
                    detail=f"The platform could not renew the access token now; retrying later "
                    f"({type(exc).__name__}: {exc}).",
                    actor=actor,
                )
                failure = TokenRefreshUnavailable(str(exc), retry_after=exc.retry_after)
            else:
                now = timezone.now()
                rotated = tokens.refresh_token is not None
                # The new refresh token is stored in the same transaction as the access token:
                # once the platform rotated it, the old one is dead.
                connection.tokens_set(
                    access_token=tokens.access_token,
                    refresh_token=(
                        tokens.refresh_token
                        if tokens.refresh_token is not None  # rotated
                        else connection.refresh_token
                    ),
                )
                connection.access_token_expires_at = now + timedelta(seconds=tokens.expires_in)
                if rotated:
                    connection.refresh_token_expires_at = now + REFRESH_TOKEN_LIFETIME
                    for field in selectors.WARNING_MARKERS.values():
                        setattr(connection, field, None)
                connection.last_refreshed_at = now
                connection.last_error = ""
                connection.refresh_queued_at = None
                connection.generation += 1
                connection.save(update_fields=_REFRESHED_FIELDS)
                connection_event_record(
                    seller_id=connection.seller_id,
                    kind=Kind.REFRESHED,
                    detail="Access token renewed"
                    + ("; the platform also issued a new refresh token." if rotated else "."),
                    actor=actor,
                )
                logger.info(
                    "seller %s token refreshed (generation %s)",
                    connection.seller_id,
                    connection.generation,
                )
    if failure is not None:
        raise failure
    return connection


@sensitive_variables()
def connection_access_token(*, connection_id: int) -> str:
    """A decrypted access token valid for at least ``settings.TOKEN_REFRESH_LEEWAY``.

    Refreshes first when needed. Raises ``ConnectionNotLive``, ``ReauthorizationRequired``
    or ``TokenRefreshUnavailable`` (only when the current token has already expired; a
    still-valid token is returned and the sweep keeps trying to refresh it).
    """
    connection = PlatformConnection.objects.filter(id=connection_id).first()
    if connection is None:
        raise ConnectionNotLive(f"connection {connection_id} does not exist")
    _ensure_live(connection)
    if not connection.tokens_decryptable:
        connection_key_lost(connection_id=connection_id)
        raise ReauthorizationRequired(KEY_LOST_REASON)
    expires = connection.access_token_expires_at
    if expires and expires > timezone.now() + settings.TOKEN_REFRESH_LEEWAY:
        return connection.access_token
    try:
        connection = connection_refresh(connection_id=connection_id)
    except TokenRefreshUnavailable:
        if expires and expires > timezone.now():
            return connection.access_token
        raise
    return connection.access_token


# --- disconnect -----------------------------------------------------------------------------


def connection_disconnect(*, connection_id: int, actor: Actor) -> PlatformConnection:
    """Forget the grant: wipe the tokens, state disconnected, record who did it.

    The platform documents no revocation endpoint, so the grant stays valid there until it
    expires or the seller revokes it in their platform account.
    """
    with transaction.atomic():
        connection = (
            PlatformConnection.objects.select_for_update(of=("self",))
            .select_related("seller")
            .get(id=connection_id)
        )
        had_grant = connection.state in (State.CONNECTED, State.NEEDS_REAUTH)
        connection.tokens_wipe()
        if had_grant:
            connection.state = State.DISCONNECTED
            connection.generation += 1
        connection.last_error = ""
        connection.save()
        who = "the seller"
        if actor is not None and getattr(actor, "is_staff", False):
            who = f"marketplace staff ({actor.get_username()})"
        elif actor is None:
            who = "the marketplace"
        connection_event_record(
            seller_id=connection.seller_id,
            kind=Kind.DISCONNECTED,
            actor=actor,
            detail=f"Disconnected by {who}; the stored tokens were deleted.",
        )
    return connection


# --- sweeps (beat) -----------------------------------------------------------------------


def _enqueue_refresh(connection_id: int, countdown: float) -> None:
    # Called on commit already: sent at once, by the task's name (tasks import this module).
    task_enqueue(CONNECTION_REFRESH_TASK, connection_id, countdown=countdown, after_commit=False)


def connection_refresh_sweep(*, now: datetime | None = None) -> int:
    """Queue one refresh per connection whose access token expires within the window.

    Bounded batches through the expiry index; each queued row is marked so the next sweep
    does not queue it again, unless the mark grows old (lost message). Returns how many.
    """
    now = now or timezone.now()
    batch_size = settings.TOKEN_REFRESH_BATCH_SIZE
    queued = 0
    while True:
        with transaction.atomic():
            ids = list(
                selectors.connections_due_for_refresh(now=now).values_list("id", flat=True)[
                    :batch_size
                ]
            )
            if not ids:
                break
            PlatformConnection.objects.filter(id__in=ids).update(refresh_queued_at=now)
            for connection_id in ids:
                transaction.on_commit(
                    partial(
                        _enqueue_refresh, connection_id, random.uniform(0, REFRESH_JITTER_SECONDS)
                    )
                )
        queued += len(ids)
        if len(ids) < batch_size:
            break
    if queued:
        logger.info("queued %s token refreshes", queued)
    return queued


@dataclass
class ExpirySweepResult:
    lapsed: int = 0
    warned: int = 0


def refresh_token_expiry_sweep(*, now: datetime | None = None) -> ExpirySweepResult:
    """Warn sellers 30/7/1 days before their refresh token expires (each warning once) and
    move connections whose refresh token lapsed to needs_reauth."""
    now = now or timezone.now()
    batch_size = settings.TOKEN_REFRESH_BATCH_SIZE
    result = ExpirySweepResult()
    while ids := list(
        selectors.connections_refresh_token_lapsed(now=now).values_list("id", flat=True)[
            :batch_size
        ]
    ):
        for connection_id in ids:
            with transaction.atomic():
                connection = (
                    PlatformConnection.objects.select_for_update(of=("self",))
                    .select_related("seller__user")
                    .get(id=connection_id)
                )
                expires = connection.refresh_token_expires_at
                if connection.state == State.CONNECTED and expires and expires <= now:
                    _connection_lose(
                        connection, reason="The platform authorization expired.", now=now
                    )
                    result.lapsed += 1
        if len(ids) < batch_size:
            break

    days_list = selectors.warning_days()
    while ids := list(
        selectors.connections_due_for_expiry_warning(now=now).values_list("id", flat=True)[
            :batch_size
        ]
    ):
        for connection_id in ids:
            with transaction.atomic():
                connection = (
                    PlatformConnection.objects.select_for_update(of=("self",))
                    .select_related("seller__user")
                    .get(id=connection_id)
                )
                expires = connection.refresh_token_expires_at
                if connection.state != State.CONNECTED or not expires or expires <= now:
                    continue
                # The nearest threshold crossed decides; larger ones are then moot, so a
                # seller first seen 5 days out gets the 7-day warning once, not two.
                crossed = [d for d in days_list if expires <= now + timedelta(days=d)]
                if not crossed:
                    continue
                days = crossed[0]
                unsent = getattr(connection, selectors.WARNING_MARKERS[days]) is None
                for d in crossed:
                    setattr(connection, selectors.WARNING_MARKERS[d], now)
                connection.save()
                if unsent:
                    connection_event_record(
                        seller_id=connection.seller_id,
                        kind=Kind.WARNING_SENT,
                        detail=f"The authorization expires within {days} day"
                        f"{'s' if days != 1 else ''}; the seller was e-mailed.",
                    )
                    transaction.on_commit(
                        partial(
                            emails.email_refresh_token_expiring, connection=connection, days=days
                        )
                    )
                    result.warned += 1
        if len(ids) < batch_size:
            break
    return result
