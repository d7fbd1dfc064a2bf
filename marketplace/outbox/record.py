"""Recording what the platform answered to a batch: one transaction, claim still held.

Each outcome is applied to its locked row only if the row still holds the batch's claim
(a worker whose lease ran out loses to the one that took over). The shared outcomes are
decided here, the same for every kind: the platform's wait after a 429 (not counted),
capped backoff after a transient failure, the dead letter after ``max_failures``, and a
call never started (not an attempt). The kind decides what success, a refusal, a missing
connection or its own outcomes mean for its row.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from marketplace.outbox import lease
from marketplace.outbox.backoff import embargo_wait_seconds
from marketplace.outbox.claim import MAX_COUNTDOWN_SECONDS
from marketplace.outbox.kind import Answer, Claim, Journal, OutboxKind
from marketplace.outbox.outcomes import (
    OK,
    RATE_LIMITED,
    REJECTED,
    SKIPPED,
    TRANSIENT,
    UNSENT,
    WAITING,
    Outcome,
)

logger = logging.getLogger(__name__)


def record(kind: OutboxKind, claims: list[Claim], outcomes: dict[int, Outcome]) -> dict[int, str]:
    """Write every claimed row's answer; returns each row's status afterwards."""
    if not claims:
        return {}
    now = timezone.now()
    statuses: dict[int, str] = {}
    with transaction.atomic():
        manager = kind.model._default_manager
        rows = {
            row.pk: row
            for row in manager.defer(*kind.record_defer)
            .select_for_update()
            .filter(pk__in=[c.pk for c in claims])
            .order_by("id")
        }
        journal = kind.journal()
        changed: list[Any] = []
        for claim in claims:
            row = rows.get(claim.pk)
            if row is None:
                statuses[claim.key] = SKIPPED  # deleted meanwhile
                continue
            if not lease.held_by(row, claim.token):
                # Our lease expired and someone else took over: their record wins.
                logger.warning("%s %s: answer came after the lease", kind.name, claim.key)
                statuses[claim.key] = kind.status_of(row)
                continue
            outcome_apply(kind, row, claim, outcomes[claim.key], now, journal)
            changed.append(row)
            statuses[claim.key] = kind.status_of(row)
        kind.rows_save(changed, now)
        journal.write()
    return statuses


def outcome_apply(
    kind: OutboxKind, row: Any, claim: Claim, outcome: Outcome, now: datetime, journal: Journal
) -> None:
    lease.clear(row)
    answer = Answer(claim, outcome, now, journal)
    if outcome.kind == OK:
        kind.done(row, answer)
    elif outcome.kind == UNSENT:
        row.attempts = max(0, row.attempts - 1)  # never sent: not an attempt
        row.next_attempt_at = now
        kind.wake(claim.key)
    elif outcome.kind == WAITING:
        kind.waiting(row, answer)
    elif outcome.kind == REJECTED:
        row.last_error = outcome.message
        row.last_error_status = outcome.status
        kind.rejected(row, answer)
    elif outcome.kind == RATE_LIMITED:
        wait = embargo_wait_seconds(outcome.retry_after, floor=kind.embargo_min_seconds)
        retry(kind, row, answer, wait, counts=False)
    elif outcome.kind == TRANSIENT:
        failure(kind, row, answer)
    else:
        kind.other(row, answer)


def failure(kind: OutboxKind, row: Any, answer: Answer) -> None:
    """A counted failure: capped backoff (at least the platform's Retry-After), or the
    dead letter at the kind's limit."""
    outcome = answer.outcome
    row.failures += 1
    row.last_error = outcome.message
    row.last_error_status = outcome.status
    if row.failures >= kind.max_failures():
        kind.dead_letter(row, answer)
        return
    delay = max(kind.backoff(row.failures), outcome.retry_after or 0.0)
    retry(kind, row, answer, delay, counts=True)


def retry(kind: OutboxKind, row: Any, answer: Answer, delay: float, *, counts: bool) -> None:
    """Due again in ``delay`` seconds, with its own wake-up when that is soon enough."""
    row.last_error = answer.outcome.message
    row.last_error_status = answer.outcome.status
    row.next_attempt_at = answer.now + timedelta(seconds=delay)
    kind.retrying(row, answer, delay, counts)
    if delay <= MAX_COUNTDOWN_SECONDS:
        kind.wake(kind.key_of(row), countdown=delay)
    # Longer waits (a 429 asking for minutes) are left to the sweeper: a countdown beyond
    # the broker's visibility timeout would be redelivered and run early.
