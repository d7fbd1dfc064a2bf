"""Recording what the platform answered to a push batch: one transaction per batch.

Each claimed order's outcome (``Outcome``) is applied to its locked sync row only if the
row still holds the batch's claim: synced, retry later (backoff, or the platform's 429
wait), dead letter after ``PUSH_MAX_FAILURES``, waiting for the seller to reconnect, or
pushed again at once when a newer version came in meanwhile. All rows go back in one
``UPDATE`` and all events in one ``INSERT``. See ``push.py`` for the whole cycle.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from marketplace.db import rows_update
from marketplace.orders.backoff import push_backoff_seconds, rate_limited_wait_seconds
from marketplace.orders.models import OrderSync, SyncEvent
from marketplace.orders.services.outbox import push_enqueue
from sellers.models import PlatformConnection

logger = logging.getLogger(__name__)

Status = OrderSync.Status
SKIPPED = "skipped"
# Wake-ups further out than this are left to the sweeper: the Redis broker redelivers a
# message not acknowledged within its visibility_timeout (settings/celery.py: 2200 s).
MAX_COUNTDOWN_SECONDS = 300.0
RESPONSE_EXCERPT_CHARS = 2000
# What a batch writes back to a sync row (rows_update does not touch auto_now fields).
SYNC_FIELDS = [
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
class Claim:
    order_id: int
    mp_order_number: str
    token: str
    version: int
    payload: dict[str, Any]
    connection: PlatformConnection


@dataclass(frozen=True)
class Outcome:
    kind: str  # ok | waiting | transient | rate_limited | rejected | unsent
    message: str = ""
    status: int | None = None
    retry_after: float | None = None
    response: dict[str, Any] | None = None


class Events:
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


def mark_waiting(sync: OrderSync, reason: str, events: Events) -> None:
    if sync.status != Status.WAITING_FOR_CONNECTION:
        events.add(
            sync, SyncEvent.Kind.WAITING_FOR_CONNECTION, reason, version=sync.desired_version
        )
    sync.status = Status.WAITING_FOR_CONNECTION
    sync.next_attempt_at = None
    sync.last_error = reason
    sync.claim_token = ""
    sync.lease_until = None


def syncs_save(syncs: list[OrderSync], now: datetime) -> None:
    for sync in syncs:
        sync.updated_at = now
    rows_update(syncs, SYNC_FIELDS)


def push_record(claims: list[Claim], outcomes: dict[int, Outcome]) -> dict[int, str]:
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
        events = Events()
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
        syncs_save(changed, now)
        events.write()
    return statuses


def _outcome_apply(
    sync: OrderSync, claim: Claim, outcome: Outcome, now: datetime, events: Events
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
        mark_waiting(sync, outcome.message, events)
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
    sync: OrderSync, claim: Claim, response: dict[str, Any], now: datetime, events: Events
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
        _newer_version_next(sync, now)  # changed while we were pushing
    else:
        sync.status = Status.SYNCED
        sync.next_attempt_at = None


def _newer_version_next(sync: OrderSync, now: datetime) -> None:
    """A newer version than the one just sent is waiting: push it now, counting afresh."""
    sync.status = Status.PENDING
    sync.attempts = 0
    sync.failures = 0
    sync.next_attempt_at = now
    push_enqueue(order_id=sync.order_id)


def _record_rejected(
    sync: OrderSync,
    claim: Claim,
    outcome: Outcome,
    newer: bool,
    now: datetime,
    events: Events,
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
        _newer_version_next(sync, now)
    else:
        sync.status = Status.FAILED
        sync.next_attempt_at = None


def _record_retry(
    sync: OrderSync,
    claim: Claim,
    outcome: Outcome,
    delay: float,
    now: datetime,
    events: Events,
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


def _record_dead_letter(sync: OrderSync, claim: Claim, outcome: Outcome, events: Events) -> None:
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
