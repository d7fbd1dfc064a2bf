"""Pushing orders to the platform (``PUT /orders/{n}``), in batches, without locks across HTTP.

Claim, call, record
-------------------
A push *claims* sync rows in one short transaction (row locks; on SQLite the IMMEDIATE
transaction serializes writers): for each row it records the batch's random claim token,
the version it will send and ``lease_until``, and builds the payload from the order's
*current* state. It then calls the platform with no transaction open, one order after
the other, and records every result in a second short transaction, for each row only if
it still holds the claim.

* While a claim is live nobody else pushes that order, so two pushes of one order never
  overlap and cannot overtake each other at the platform.
* A change during the call bumps ``desired_version``; when the claimer records its
  result it sees the newer version and queues the next push (which sends the newer state).
* A push that finds the version already pushed does nothing (duplicate wake-ups are free).
* A worker that dies mid-batch leaves claims that expire after ``PUSH_LEASE_SECONDS``;
  the next drain (or the sweeper's) claims those orders again. A batch stops sending
  while it can still finish its current call before its lease ends.

Why batches
-----------
Per order, the work around the HTTP call (a broker message, two transactions, a call-log
row, an event) cost several times what the call itself costs. A *drain* claims up to
``PUSH_BATCH_SIZE`` due orders with ``SKIP LOCKED`` (several workers drain side by side
without waiting on each other), so those costs are paid once per batch. Wake-ups come
from the doorbell (``services/doorbell.py``); a drain that finds a full batch rings it,
so an idle worker joins in. ``order_push`` is the same code for one order (delayed
retries, tests, admin tools).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from django.db.models import Q
from django.utils import timezone

from marketplace.db import rows_update
from marketplace.orders.backoff import push_backoff_seconds, rate_limited_wait_seconds
from marketplace.orders.models import Order, OrderSync, SyncEvent
from marketplace.orders.payloads import order_payload
from marketplace.orders.services import doorbell
from marketplace.orders.services.outbox import push_enqueue
from marketplace.platform.calllog import platform_calls_buffered
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
# What a batch writes back to a sync row (rows_update does not touch auto_now fields).
_SYNC_FIELDS = [
    "status",
    "attempts",
    "failures",
    "next_attempt_at",
    "claim_token",
    "claimed_version",
    "lease_until",
    "last_error",
    "last_error_status",
    "last_payload",
    "last_response",
    "last_pushed_at",
    "pushed_version",
    "updated_at",
]


@dataclass(frozen=True)
class _Claim:
    order_id: int
    mp_order_number: str
    token: str
    version: int
    payload: dict[str, Any]
    connection: PlatformConnection


@dataclass(frozen=True)
class _Outcome:
    kind: str  # ok | waiting | transient | rate_limited | rejected | unsent
    message: str = ""
    status: int | None = None
    retry_after: float | None = None
    response: dict[str, Any] | None = None


class _Events:
    """Sync events of one transaction, written with one INSERT at its end."""

    def __init__(self) -> None:
        self.rows: list[SyncEvent] = []

    def add(
        self,
        sync: OrderSync,
        kind: str,
        message: str,
        *,
        version: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        self.rows.append(
            SyncEvent(
                order_id=sync.order_id,
                kind=kind,
                version=version,
                message=message[:2000],
                detail=detail or {},
            )
        )

    def write(self) -> None:
        SyncEvent.objects.bulk_create(self.rows)


# --- claiming ---------------------------------------------------------------------------


def _due(now: datetime) -> Q:
    """Rows a drain may claim: pending or retrying, due, and not claimed by a live lease."""
    return Q(
        status__in=[Status.PENDING, Status.RETRYING], next_attempt_at__lte=now + DUE_TOLERANCE
    ) & (Q(claim_token="") | Q(lease_until__lt=now))


def _skip_reason(sync: OrderSync, now: datetime, force: bool) -> str | None:
    """Why this (locked) row must not be pushed now, or None if it may."""
    if sync.pushed_version >= sync.desired_version:
        return "up to date"
    if sync.claim_token and sync.lease_until and sync.lease_until > now:
        return "claimed"  # another worker is pushing; it re-queues if a newer version came
    if sync.status == Status.FAILED and not force:
        return "failed"  # dead letter: waits for a person
    if (
        sync.status == Status.RETRYING
        and not force
        and sync.next_attempt_at
        and sync.next_attempt_at > now + DUE_TOLERANCE
    ):
        return "not due"  # its own wake-up or the sweeper comes back
    return None


def _mark_waiting(sync: OrderSync, reason: str, events: _Events) -> None:
    if sync.status != Status.WAITING_FOR_CONNECTION:
        events.add(
            sync, SyncEvent.Kind.WAITING_FOR_CONNECTION, reason, version=sync.desired_version
        )
    sync.status = Status.WAITING_FOR_CONNECTION
    sync.next_attempt_at = None
    sync.last_error = reason
    sync.claim_token = ""
    sync.lease_until = None


def _push_claim(
    *, order_ids: list[int] | None, force: bool = False, limit: int = 1
) -> tuple[list[_Claim], dict[int, str], int]:
    """Claim the given orders, or (``order_ids=None``) up to ``limit`` due ones.

    Returns the claims, the status of each row looked at but not claimed ("skipped" or
    its new status) and how many rows were looked at.
    """
    now = timezone.now()
    token = secrets.token_hex(16)
    with transaction.atomic():
        if order_ids is not None:
            # Named orders wait for a row lock (ordered by id: no deadlock between batches).
            locked = OrderSync.objects.select_for_update().filter(order_id__in=order_ids)
            syncs = list(locked.order_by("id"))
        else:
            # Drains skip rows another transaction holds: that one is claiming or
            # recording them, or changing the order (and will ring again).
            locked = OrderSync.objects.select_for_update(skip_locked=True).filter(_due(now))
            syncs = list(locked.order_by("next_attempt_at", "id")[:limit])
        verdicts: dict[int, str] = {}
        claimable: list[OrderSync] = []
        changed: list[OrderSync] = []
        for sync in syncs:
            reason = _skip_reason(sync, now, force)
            if reason is None:
                claimable.append(sync)
                continue
            verdicts[sync.order_id] = SKIPPED
            live_claim = sync.claim_token and sync.lease_until and sync.lease_until > now
            if reason == "up to date" and sync.status != Status.SYNCED and not live_claim:
                sync.status = Status.SYNCED
                sync.next_attempt_at = None
                sync.claim_token = ""
                sync.lease_until = None
                changed.append(sync)
        # Read the orders in a statement of their own, after the locks are held. Joined
        # into the locking query, Postgres would re-check only the locked sync rows after
        # waiting for a concurrent change and keep the order rows from before it: a new
        # version with the old state, pushed and marked synced (a lost update). Every
        # change bumps the version under the sync row's lock, so this read matches it.
        orders = Order.objects.prefetch_related("lines").in_bulk([s.order_id for s in claimable])
        connections = {
            c.seller_id: c
            for c in PlatformConnection.objects.filter(
                seller_id__in={o.seller_id for o in orders.values()}
            )
        }
        events = _Events()
        claims: list[_Claim] = []
        lease_until = now + timedelta(seconds=settings.PUSH_LEASE_SECONDS)
        for sync in claimable:
            order = orders[sync.order_id]
            connection = connections.get(order.seller_id)
            if connection is None or not connection.is_live:
                _mark_waiting(sync, "the seller's platform connection is not live", events)
                verdicts[sync.order_id] = sync.status
            else:
                payload = order_payload(order)
                sync.claim_token = token
                sync.claimed_version = sync.desired_version
                sync.lease_until = lease_until
                sync.attempts += 1
                sync.last_payload = payload
                claims.append(
                    _Claim(
                        order_id=order.id,
                        mp_order_number=order.mp_order_number,
                        token=token,
                        version=sync.claimed_version,
                        payload=payload,
                        connection=connection,
                    )
                )
            changed.append(sync)
        _syncs_save(changed, now)
        events.write()
    return claims, verdicts, len(syncs)


def _syncs_save(syncs: list[OrderSync], now: datetime) -> None:
    for sync in syncs:
        sync.updated_at = now
    rows_update(syncs, _SYNC_FIELDS)


# --- calling the platform ---------------------------------------------------------------


def _call_budget_seconds() -> float:
    """The longest one push can take: two attempts (401 → refresh → retry) and a refresh."""
    return 3 * (settings.PLATFORM_CONNECT_TIMEOUT + settings.PLATFORM_READ_TIMEOUT)


_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _send_pool(size: int) -> ThreadPoolExecutor:
    """This process's sender threads, kept for its life: each holds a keep-alive session.

    Created on first use, so a prefork child makes its own after the fork.
    """
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size != size:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="push-send")
            _pool_size = size
        return _pool


def _in_sender_thread(send: Callable[[_Claim], _Outcome], claim: _Claim) -> _Outcome:
    try:
        return send(claim)
    finally:
        # A 401 (token refresh) or a lost grant reads the database from this thread:
        # do not leave that connection open in a pool thread.
        connections.close_all()


def _push_send(claims: list[_Claim]) -> dict[int, _Outcome]:
    """PUT each claimed order; returns the outcome per order.

    Up to ``PUSH_SEND_CONCURRENCY`` calls are in flight at once (threads of this
    process): with a real platform a push mostly waits for the answer, and one call at
    a time per worker process would need hundreds of processes at peak rates.
    """
    # Stop starting calls while one more could outlive the lease: past it, another
    # worker may claim the order and two pushes of it could overlap.
    send_until = time.monotonic() + settings.PUSH_LEASE_SECONDS - _call_budget_seconds() - 1.0
    clients: dict[int, PlatformClient] = {}
    for claim in claims:
        seller_id = claim.connection.seller_id
        if seller_id not in clients:
            clients[seller_id] = client = PlatformClient.for_connection(claim.connection)
            # Read each seller's token here, once: sender threads then need no database.
            with contextlib.suppress(Exception):  # _push_one meets and records the error
                client.access_token()
    # After a 429 or a dead connection, the seller's orders not sent yet are held: they
    # would meet the same answer (and a 429 asks us to slow down).
    held: dict[int, _Outcome] = {}
    held_lock = threading.Lock()

    def send(claim: _Claim) -> _Outcome:
        seller_id = claim.connection.seller_id
        with held_lock:
            hold = held.get(seller_id)
        if hold is not None:
            return hold
        if time.monotonic() > send_until:
            return _Outcome("unsent")
        outcome = _push_one(clients[seller_id], claim)
        if outcome.kind == "rate_limited":
            hold = _Outcome(
                "rate_limited",
                message=f"not sent: the platform rate-limited this seller ({outcome.message})",
                status=outcome.status,
                retry_after=outcome.retry_after,
            )
        elif outcome.kind == "waiting":
            hold = outcome
        if hold is not None:
            with held_lock:
                held.setdefault(seller_id, hold)
        return outcome

    concurrency = max(1, min(settings.PUSH_SEND_CONCURRENCY, len(claims)))
    with platform_calls_buffered():
        if concurrency == 1:
            return {claim.order_id: send(claim) for claim in claims}
        pool = _send_pool(settings.PUSH_SEND_CONCURRENCY)
        # Each job runs in a copy of this context, so its call records land in our buffer.
        futures = {
            claim.order_id: pool.submit(
                contextvars.copy_context().run, _in_sender_thread, send, claim
            )
            for claim in claims
        }
        return {order_id: future.result() for order_id, future in futures.items()}


def _push_one(client: PlatformClient, claim: _Claim) -> _Outcome:
    try:
        response = client.put_order(claim.mp_order_number, claim.payload)
    except ConnectionNotLive as exc:  # includes ReauthorizationRequired
        return _Outcome("waiting", message=str(exc) or "connection not live")
    except TokenRefreshUnavailable as exc:
        return _Outcome(
            "transient", message=f"token refresh unavailable: {exc}", retry_after=exc.retry_after
        )
    except SellerConnectionError as exc:  # vault misconfigured and the like
        return _Outcome("transient", message=str(exc))
    except PlatformRateLimited as exc:
        return _Outcome(
            "rate_limited", message=exc.message, status=exc.status, retry_after=exc.retry_after
        )
    except PlatformRejected as exc:
        return _Outcome("rejected", message=exc.message, status=exc.status)
    except PlatformAuthError as exc:
        # A 401 survived a forced refresh. If the grant is gone the vault has marked the
        # connection; otherwise treat it as transient (bounded by the dead letter).
        connection = PlatformConnection.objects.filter(pk=claim.connection.pk).first()
        live = connection is not None and connection.is_live
        return _Outcome("transient" if live else "waiting", message=exc.message, status=exc.status)
    except PlatformError as exc:  # unavailable, timeout, malformed answer
        return _Outcome(
            "transient", message=exc.message, status=exc.status, retry_after=exc.retry_after
        )
    except Exception as exc:
        logger.exception("unexpected error pushing order %s", claim.mp_order_number)
        return _Outcome("transient", message=f"unexpected error: {exc!r}")
    return _Outcome("ok", response=response)


# --- recording the results --------------------------------------------------------------


def _push_record(claims: list[_Claim], outcomes: dict[int, _Outcome]) -> dict[int, str]:
    """Write every claimed order's result; returns the status of each afterwards."""
    now = timezone.now()
    statuses: dict[int, str] = {}
    with transaction.atomic():
        syncs = {
            sync.order_id: sync
            for sync in OrderSync.objects.select_for_update()
            .filter(order_id__in=[c.order_id for c in claims])
            .order_by("id")
        }
        events = _Events()
        changed: list[OrderSync] = []
        for claim in claims:
            sync = syncs.get(claim.order_id)
            if sync is None:
                statuses[claim.order_id] = SKIPPED  # the order was deleted meanwhile
                continue
            if sync.claim_token != claim.token:
                # Our lease expired and someone else took over: their record wins.
                logger.warning("push of order %s finished after its lease", claim.mp_order_number)
                statuses[claim.order_id] = sync.status
                continue
            _outcome_apply(sync, claim, outcomes[claim.order_id], now, events)
            changed.append(sync)
            statuses[claim.order_id] = sync.status
        _syncs_save(changed, now)
        events.write()
    return statuses


def _outcome_apply(
    sync: OrderSync, claim: _Claim, outcome: _Outcome, now: datetime, events: _Events
) -> None:
    sync.claim_token = ""
    sync.lease_until = None
    newer = sync.desired_version > claim.version
    if outcome.kind == "ok":
        _record_success(sync, claim, outcome.response or {}, now, events)
    elif outcome.kind == "unsent":
        sync.attempts = max(0, sync.attempts - 1)  # never sent: not an attempt
        sync.next_attempt_at = now
        push_enqueue(order_id=sync.order_id)
    elif outcome.kind == "waiting":
        _mark_waiting(sync, outcome.message, events)
    elif outcome.kind == "rejected":
        _record_rejected(sync, claim, outcome, newer, now, events)
    elif outcome.kind == "rate_limited":
        delay = rate_limited_wait_seconds(outcome.retry_after)
        _record_retry(sync, claim, outcome, delay, now, events, counts=False)
    else:
        sync.failures += 1
        if sync.failures >= settings.PUSH_MAX_FAILURES:
            _record_dead_letter(sync, claim, outcome, events)
        else:
            delay = push_backoff_seconds(sync.failures)
            if outcome.retry_after:
                delay = max(delay, outcome.retry_after)
            _record_retry(sync, claim, outcome, delay, now, events, counts=True)


def _record_success(
    sync: OrderSync, claim: _Claim, response: dict[str, Any], now: datetime, events: _Events
) -> None:
    sync.pushed_version = max(sync.pushed_version, claim.version)
    sync.last_pushed_at = now
    sync.last_response = json.dumps(response, default=str)[:RESPONSE_EXCERPT_CHARS]
    sync.last_error = ""
    sync.last_error_status = None
    sync.failures = 0
    events.add(
        sync,
        SyncEvent.Kind.PUSHED,
        f"platform has the order as {claim.payload.get('marketplace_state')}",
        version=claim.version,
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
    sync: OrderSync,
    claim: _Claim,
    outcome: _Outcome,
    newer: bool,
    now: datetime,
    events: _Events,
) -> None:
    sync.last_error = outcome.message
    sync.last_error_status = outcome.status
    events.add(
        sync,
        SyncEvent.Kind.PUSH_FAILED,
        f"platform rejected the order ({outcome.status}): {outcome.message}",
        version=claim.version,
        detail={"status": outcome.status},
    )
    if newer:
        # A newer version is already waiting; it is a different request, so try it.
        sync.status = Status.PENDING
        sync.attempts = 0
        sync.failures = 0
        sync.next_attempt_at = now
        push_enqueue(order_id=sync.order_id)
    else:
        sync.status = Status.FAILED
        sync.next_attempt_at = None


def _record_retry(
    sync: OrderSync,
    claim: _Claim,
    outcome: _Outcome,
    delay: float,
    now: datetime,
    events: _Events,
    *,
    counts: bool,
) -> None:
    sync.status = Status.RETRYING
    sync.last_error = outcome.message
    sync.last_error_status = outcome.status
    sync.next_attempt_at = now + timedelta(seconds=delay)
    what = "rate limited" if not counts else f"failure {sync.failures}"
    events.add(
        sync,
        SyncEvent.Kind.RETRY_SCHEDULED,
        f"{what}: {outcome.message}; next attempt in {delay:.1f} s",
        version=claim.version,
        detail={"status": outcome.status, "delay_seconds": round(delay, 3)},
    )
    if delay <= MAX_COUNTDOWN_SECONDS:
        push_enqueue(order_id=sync.order_id, countdown=delay)
    # Longer waits (a 429 asking for minutes) are left to the sweeper: a countdown beyond
    # the broker's visibility timeout would be redelivered and run early.


def _record_dead_letter(sync: OrderSync, claim: _Claim, outcome: _Outcome, events: _Events) -> None:
    sync.status = Status.FAILED
    sync.last_error = f"gave up after {sync.failures} failed attempts: {outcome.message}"
    sync.last_error_status = outcome.status
    sync.next_attempt_at = None
    events.add(
        sync,
        SyncEvent.Kind.PUSH_FAILED,
        sync.last_error,
        version=claim.version,
        detail={"status": outcome.status},
    )


# --- entry points ---------------------------------------------------------------------------


def _push_claimed(claims: list[_Claim]) -> tuple[dict[int, str], int]:
    """Send and record; returns the statuses and how many orders were actually sent."""
    if not claims:
        return {}, 0
    outcomes = _push_send(claims)
    sent = sum(1 for outcome in outcomes.values() if outcome.kind != "unsent")
    return _push_record(claims, outcomes), sent


def orders_push(*, order_ids: Iterable[int], force: bool = False) -> dict[int, str]:
    """Push these orders' current state where the platform does not have it yet.

    Returns each order's sync status afterwards ("skipped" when there was nothing to do).
    ``force`` pushes failed, waiting or not-yet-due orders now (admin tools).
    """
    claims, verdicts, _ = _push_claim(order_ids=list(order_ids), force=force)
    return {**verdicts, **_push_claimed(claims)[0]}


def order_push(*, order_id: int, force: bool = False) -> str:
    """Push one order (see ``orders_push``); returns its sync status or "skipped"."""
    return orders_push(order_ids=[order_id], force=force).get(order_id, SKIPPED)


def orders_push_drain(*, seconds: float | None = None) -> int:
    """Push due orders in batches until none is left or ``seconds`` have passed.

    Returns how many orders were claimed. Runs side by side with other drains.
    """
    budget = settings.PUSH_DRAIN_SECONDS if seconds is None else seconds
    batch_size = settings.PUSH_BATCH_SIZE
    # Before the first claim: a change committed after it must ring again.
    doorbell.push_drain_doorbell_clear()
    started = time.monotonic()
    claimed = 0
    while True:
        claims, _, looked_at = _push_claim(order_ids=None, limit=batch_size)
        if looked_at == 0:
            return claimed
        if looked_at == batch_size:
            doorbell.push_drain_ring()  # there may be more: let an idle worker drain beside us
        claimed += len(claims)
        _, sent = _push_claimed(claims)
        if claims and not sent:
            # Nothing could be sent within the lease (PUSH_LEASE_SECONDS too short for the
            # timeouts): do not spin; the orders stay due for the next drain.
            logger.error("push batch sent nothing: PUSH_LEASE_SECONDS is below the call budget")
            return claimed
        if time.monotonic() - started > budget:
            # Hand over rather than hog the worker process; the rest stays due.
            doorbell.push_drain_ring(force=True)
            return claimed
