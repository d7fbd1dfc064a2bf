"""Pushing orders to the platform (``PUT /orders/{n}``), retries, the sweeper and releases.

Ordering without holding a row lock across HTTP
-----------------------------------------------
A push *claims* the order's sync row in a short transaction (row lock; on SQLite the
IMMEDIATE transaction serializes writers): it records a random claim token, the version
it will send and ``lease_until``, and builds the payload from the order's *current*
state in that same transaction. It then calls the platform with no transaction open, and
records the result in a second short transaction only if it still holds the claim.

* While a claim is live nobody else pushes that order, so two pushes of one order never
  overlap and cannot overtake each other at the platform.
* A change during the call bumps ``desired_version``; when the claimer records its
  result it sees the newer version and queues the next push (which sends the newer state).
* A push that finds the version already pushed does nothing (duplicate wake-ups are free).
* A worker that dies mid-call leaves a claim that expires after ``PUSH_LEASE_SECONDS``
  (longer than the longest possible call); the sweeper then re-queues the order.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from marketplace.orders.backoff import push_backoff_seconds, rate_limited_wait_seconds
from marketplace.orders.models import Order, OrderSync, SyncEvent
from marketplace.orders.payloads import order_payload
from marketplace.orders.services.outbox import push_enqueue, sync_event_add
from marketplace.platform.client import PlatformClient
from marketplace.platform.errors import (
    PlatformAuthError,
    PlatformError,
    PlatformRateLimited,
    PlatformRejected,
)
from sellers.errors import ConnectionNotLive, SellerConnectionError, TokenRefreshUnavailable
from sellers.models import PlatformConnection

logger = logging.getLogger(__name__)

Status = OrderSync.Status
# A retry that fires a moment early (clock, countdown rounding) still counts as due.
DUE_TOLERANCE = timedelta(seconds=1)
SKIPPED = "skipped"
# Wake-ups further out than this are left to the sweeper: the Redis broker redelivers a
# message not acknowledged within its visibility_timeout (600 s in settings).
MAX_COUNTDOWN_SECONDS = 300.0
RESPONSE_EXCERPT_CHARS = 2000


@dataclass(frozen=True)
class _Claim:
    order_id: int
    mp_order_number: str
    token: str
    version: int
    payload: dict[str, Any]
    connection: PlatformConnection


def _connection_live(seller_id: int) -> PlatformConnection | None:
    connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
    return connection if connection is not None and connection.is_live else None


def _mark_waiting(sync: OrderSync, reason: str) -> None:
    if sync.status != Status.WAITING_FOR_CONNECTION:
        sync_event_add(
            order_id=sync.order_id,
            kind=SyncEvent.Kind.WAITING_FOR_CONNECTION,
            version=sync.desired_version,
            message=reason,
        )
    sync.status = Status.WAITING_FOR_CONNECTION
    sync.next_attempt_at = None
    sync.last_error = reason
    sync.claim_token = ""
    sync.lease_until = None


def _push_claim(*, order_id: int, force: bool) -> _Claim | str:
    """Claim the order for one push, or say why not ("skipped" or the new status)."""
    now = timezone.now()
    with transaction.atomic():
        # Lock only the sync row: order changes lock the order, then the sync row; locking
        # both here (in whatever order Postgres picks) could deadlock with them.
        sync = OrderSync.objects.select_for_update().filter(order_id=order_id).first()
        if sync is None:
            return SKIPPED
        if sync.pushed_version >= sync.desired_version:
            if sync.status != Status.SYNCED and not sync.claim_token:
                sync.status = Status.SYNCED
                sync.next_attempt_at = None
                sync.save(update_fields=["status", "next_attempt_at", "updated_at"])
            return SKIPPED
        if sync.claim_token and sync.lease_until and sync.lease_until > now:
            return SKIPPED  # another worker is pushing; it re-queues if a newer version came
        if sync.status == Status.FAILED and not force:
            return SKIPPED  # dead letter: waits for a person
        if (
            sync.status == Status.RETRYING
            and not force
            and sync.next_attempt_at
            and sync.next_attempt_at > now + DUE_TOLERANCE
        ):
            return SKIPPED  # not due yet; its own wake-up or the sweeper comes back
        # Read the order in a statement of its own, after the lock is held. Joined into
        # the locking query, Postgres would re-check only the locked sync row after
        # waiting for a concurrent change and keep the order row from before it: a new
        # version with the old state, pushed and marked synced (a lost update). Every
        # change bumps the version under this lock, so this read matches the version.
        order = Order.objects.get(pk=sync.order_id)
        connection = _connection_live(order.seller_id)
        if connection is None:
            _mark_waiting(sync, "the seller's platform connection is not live")
            sync.save()
            return sync.status
        payload = order_payload(order)
        sync.claim_token = secrets.token_hex(16)
        sync.claimed_version = sync.desired_version
        sync.lease_until = now + timedelta(seconds=settings.PUSH_LEASE_SECONDS)
        sync.attempts += 1
        sync.last_payload = payload
        sync.save(
            update_fields=[
                "claim_token",
                "claimed_version",
                "lease_until",
                "attempts",
                "last_payload",
                "updated_at",
            ]
        )
        return _Claim(
            order_id=order.id,
            mp_order_number=order.mp_order_number,
            token=sync.claim_token,
            version=sync.claimed_version,
            payload=payload,
            connection=connection,
        )


def order_push(*, order_id: int, force: bool = False) -> str:
    """Push the order's current state if the platform does not have it yet.

    Returns the sync status afterwards (or "skipped" when there was nothing to do).
    ``force`` pushes a failed or not-yet-due order now (admin retry).
    """
    claim = _push_claim(order_id=order_id, force=force)
    if isinstance(claim, str):
        return claim
    client = PlatformClient.for_connection(claim.connection)
    try:
        response = client.put_order(claim.mp_order_number, claim.payload)
    except ConnectionNotLive as exc:  # includes ReauthorizationRequired
        return _push_record(claim, outcome="waiting", message=str(exc) or "connection not live")
    except TokenRefreshUnavailable as exc:
        return _push_record(
            claim,
            outcome="transient",
            message=f"token refresh unavailable: {exc}",
            retry_after=exc.retry_after,
        )
    except SellerConnectionError as exc:  # vault misconfigured and the like
        return _push_record(claim, outcome="transient", message=str(exc))
    except PlatformRateLimited as exc:
        return _push_record(
            claim,
            outcome="rate_limited",
            message=exc.message,
            status=exc.status,
            retry_after=exc.retry_after,
        )
    except PlatformRejected as exc:
        return _push_record(claim, outcome="rejected", message=exc.message, status=exc.status)
    except PlatformAuthError as exc:
        # A 401 survived a forced refresh. If the grant is gone the vault has marked the
        # connection; otherwise treat it as transient (bounded by the dead letter).
        live = _connection_live(claim.connection.seller_id) is not None
        return _push_record(
            claim,
            outcome="transient" if live else "waiting",
            message=exc.message,
            status=exc.status,
        )
    except PlatformError as exc:  # unavailable, timeout, malformed answer
        return _push_record(
            claim,
            outcome="transient",
            message=exc.message,
            status=exc.status,
            retry_after=exc.retry_after,
        )
    except Exception as exc:
        logger.exception("unexpected error pushing order %s", claim.mp_order_number)
        return _push_record(claim, outcome="transient", message=f"unexpected error: {exc!r}")
    return _push_record(claim, outcome="ok", response=response)


def _push_record(
    claim: _Claim,
    *,
    outcome: str,
    message: str = "",
    status: int | None = None,
    retry_after: float | None = None,
    response: dict[str, Any] | None = None,
) -> str:
    now = timezone.now()
    with transaction.atomic():
        sync = OrderSync.objects.select_for_update().get(order_id=claim.order_id)
        if sync.claim_token != claim.token:
            # Our lease expired and someone else took over: their record wins.
            logger.warning("push of order %s finished after its lease", claim.mp_order_number)
            return sync.status
        sync.claim_token = ""
        sync.lease_until = None
        newer = sync.desired_version > claim.version
        if outcome == "ok":
            _record_success(sync, claim, response or {}, now)
        elif outcome == "waiting":
            _mark_waiting(sync, message)
        elif outcome == "rejected":
            _record_rejected(sync, claim, message, status, newer)
        elif outcome == "rate_limited":
            _record_retry(
                sync,
                claim,
                message,
                status,
                rate_limited_wait_seconds(retry_after),
                now,
                counts=False,
            )
        else:
            sync.failures += 1
            if sync.failures >= settings.PUSH_MAX_FAILURES:
                _record_dead_letter(sync, claim, message, status)
            else:
                delay = push_backoff_seconds(sync.failures)
                if retry_after:
                    delay = max(delay, retry_after)
                _record_retry(sync, claim, message, status, delay, now, counts=True)
        sync.save()
    return sync.status


def _record_success(sync: OrderSync, claim: _Claim, response: dict[str, Any], now: Any) -> None:
    sync.pushed_version = max(sync.pushed_version, claim.version)
    sync.last_pushed_at = now
    sync.last_response = json.dumps(response, default=str)[:RESPONSE_EXCERPT_CHARS]
    sync.last_error = ""
    sync.last_error_status = None
    sync.failures = 0
    sync_event_add(
        order_id=sync.order_id,
        kind=SyncEvent.Kind.PUSHED,
        version=claim.version,
        message=f"platform has the order as {claim.payload.get('marketplace_state')}",
    )
    if sync.desired_version > sync.pushed_version:
        # Changed while we were pushing: send the newer state next.
        sync.status = Status.PENDING
        sync.attempts = 0
        sync.next_attempt_at = now
        push_enqueue(order_id=sync.order_id)
    else:
        sync.status = Status.SYNCED
        sync.next_attempt_at = None


def _record_rejected(
    sync: OrderSync, claim: _Claim, message: str, status: int | None, newer: bool
) -> None:
    sync.last_error = message
    sync.last_error_status = status
    sync_event_add(
        order_id=sync.order_id,
        kind=SyncEvent.Kind.PUSH_FAILED,
        version=claim.version,
        message=f"platform rejected the order ({status}): {message}",
        detail={"status": status},
    )
    if newer:
        # A newer version is already waiting; it is a different request, so try it.
        sync.status = Status.PENDING
        sync.attempts = 0
        sync.failures = 0
        sync.next_attempt_at = timezone.now()
        push_enqueue(order_id=sync.order_id)
    else:
        sync.status = Status.FAILED
        sync.next_attempt_at = None


def _record_retry(
    sync: OrderSync,
    claim: _Claim,
    message: str,
    status: int | None,
    delay: float,
    now: Any,
    *,
    counts: bool,
) -> None:
    sync.status = Status.RETRYING
    sync.last_error = message
    sync.last_error_status = status
    sync.next_attempt_at = now + timedelta(seconds=delay)
    what = "rate limited" if not counts else f"failure {sync.failures}"
    sync_event_add(
        order_id=sync.order_id,
        kind=SyncEvent.Kind.RETRY_SCHEDULED,
        version=claim.version,
        message=f"{what}: {message}; next attempt in {delay:.1f} s",
        detail={"status": status, "delay_seconds": round(delay, 3)},
    )
    if delay <= MAX_COUNTDOWN_SECONDS:
        push_enqueue(order_id=sync.order_id, countdown=delay)
    # Longer waits (a 429 asking for minutes) are left to the sweeper: a countdown beyond
    # the broker's visibility timeout would be redelivered and run early.


def _record_dead_letter(sync: OrderSync, claim: _Claim, message: str, status: int | None) -> None:
    sync.status = Status.FAILED
    sync.last_error = f"gave up after {sync.failures} failed attempts: {message}"
    sync.last_error_status = status
    sync.next_attempt_at = None
    sync_event_add(
        order_id=sync.order_id,
        kind=SyncEvent.Kind.PUSH_FAILED,
        version=claim.version,
        message=sync.last_error,
        detail={"status": status},
    )


# --- the sweeper, releases and admin retries -----------------------------------------------


def order_sync_sweep(*, now: Any = None, limit: int | None = None) -> int:
    """Re-queue pushes whose wake-up was lost or whose retry is due; release waiting
    orders of sellers who are connected again. Returns how many pushes were queued."""
    now = now or timezone.now()
    limit = limit or settings.PUSH_SWEEP_BATCH_SIZE
    grace = timedelta(seconds=settings.PUSH_SWEEP_GRACE_SECONDS)
    unclaimed = Q(claim_token="") | Q(lease_until__lt=now)
    due = (
        Q(status=Status.PENDING, next_attempt_at__lte=now - grace)
        | Q(status=Status.RETRYING, next_attempt_at__lte=now)
        | Q(status__in=[Status.PENDING, Status.RETRYING], next_attempt_at__isnull=True)
    )
    order_ids = list(
        OrderSync.objects.filter(due & unclaimed)
        .order_by("next_attempt_at")
        .values_list("order_id", flat=True)[:limit]
    )
    # Mark them re-queued now (a due retry becomes pending): the next sweep leaves them
    # alone for another grace period instead of piling duplicate wake-ups onto a backlog.
    OrderSync.objects.filter(due & unclaimed, order_id__in=order_ids).update(
        status=Status.PENDING, next_attempt_at=now, updated_at=now
    )
    for order_id in order_ids:
        push_enqueue(order_id=order_id)
    released = 0
    waiting_sellers = (
        OrderSync.objects.filter(
            status=Status.WAITING_FOR_CONNECTION,
            order__seller__connection__state=PlatformConnection.State.CONNECTED,
        )
        .values_list("order__seller_id", flat=True)
        .distinct()
    )
    for seller_id in list(waiting_sellers):
        released += orders_release_for_seller(seller_id=seller_id, limit=limit)
    return len(order_ids) + released


def orders_release_for_seller(*, seller_id: int, limit: int | None = None) -> int:
    """The seller is connected again: queue every order that waited for the connection."""
    if _connection_live(seller_id) is None:
        return 0
    now = timezone.now()
    with transaction.atomic():
        syncs = list(
            OrderSync.objects.select_for_update()
            .filter(order__seller_id=seller_id, status=Status.WAITING_FOR_CONNECTION)
            .order_by("id")[: limit or settings.PUSH_SWEEP_BATCH_SIZE]
        )
        for sync in syncs:
            sync.status = Status.PENDING
            sync.attempts = 0
            sync.failures = 0
            sync.next_attempt_at = now
            sync.last_error = ""
            sync.save()
            sync_event_add(
                order_id=sync.order_id,
                kind=SyncEvent.Kind.RELEASED,
                version=sync.desired_version,
                message="the seller is connected again",
            )
            push_enqueue(order_id=sync.order_id)
    return len(syncs)


def order_sync_retry(*, order_id: int, actor: str) -> OrderSync:
    """An admin asks to push this order again now (usually a failed one)."""
    now = timezone.now()
    with transaction.atomic():
        sync = OrderSync.objects.select_for_update().get(order_id=order_id)
        if sync.status in {Status.SYNCED} and sync.pushed_version >= sync.desired_version:
            return sync
        sync.status = Status.PENDING
        sync.attempts = 0
        sync.failures = 0
        sync.next_attempt_at = now
        sync.save()
        sync_event_add(
            order_id=order_id,
            kind=SyncEvent.Kind.ADMIN_RETRY,
            version=sync.desired_version,
            actor=actor,
            message=f"retry requested by {actor}",
        )
        push_enqueue(order_id=order_id)
    return sync


def seller_failed_orders_retry(*, seller_id: int, actor: str) -> int:
    """Retry every failed push of one seller; returns how many were queued."""
    order_ids = list(
        OrderSync.objects.filter(order__seller_id=seller_id, status=Status.FAILED).values_list(
            "order_id", flat=True
        )
    )
    for order_id in order_ids:
        order_sync_retry(order_id=order_id, actor=actor)
    return len(order_ids)
