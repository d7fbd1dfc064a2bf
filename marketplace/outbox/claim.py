"""Claiming outbox rows with a lease, and recording only while the claim holds.

The outbox's use of the one lease (``lease.py``): a short transaction locks the rows
(``SKIP LOCKED`` for a drain, so drains side by side never wait on each other; named rows
wait, ordered by id, so two batches cannot deadlock), stamps each with the batch's random
token, a lease and one more attempt, and lets the kind build what it will send. No lock
is held across the HTTP call: the lease keeps others off, and a worker that dies leaves a
lease that runs out; the next claim takes the row again and counts the lost attempt as a
failure.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from marketplace.outbox import lease
from marketplace.outbox.kind import Answer, Claim, OutboxKind
from marketplace.outbox.outcomes import SKIPPED, TRANSIENT, WORKER_LOST, Outcome

# Wake-ups further out than this are left to the sweeper: the Redis broker redelivers a
# message not acknowledged within its visibility_timeout (settings/celery.py: 2200 s).
MAX_COUNTDOWN_SECONDS = 300.0


@dataclass
class Batch:
    token: str
    claims: list[Claim] = field(default_factory=list)
    # Each row looked at but not claimed: "skipped", or its status after the claim.
    verdicts: dict[int, str] = field(default_factory=dict)
    # Why each skipped row was skipped (claimed, failed, not due, or the kind's reason).
    reasons: dict[int, str] = field(default_factory=dict)
    looked_at: int = 0
    # When the lease began (``time.monotonic()``): no call starts that could outlive it.
    leased_at: float = field(default_factory=time.monotonic)


def _skip_reason(kind: OutboxKind, row: Any, now: datetime, force: bool) -> str | None:
    if lease.is_held(row, now):
        return "claimed"  # another worker is sending; it records (and re-queues) itself
    if kind.is_dead(row) and not force:
        return "failed"  # dead letter: waits for a person
    if row.next_attempt_at and row.next_attempt_at > now and not force:
        return "not due"  # its own wake-up or the sweeper comes back
    return None


def claim(
    kind: OutboxKind,
    *,
    keys: list[int] | None = None,
    limit: int = 1,
    force: bool = False,
    wait: bool = True,
) -> Batch:
    """Claim the rows named by ``keys``, or (``keys=None``) up to ``limit`` due ones.

    ``force`` claims dead letters and rows not due yet (staff, admin tools); ``wait=False``
    skips named rows another transaction has locked instead of waiting for them.
    """
    now = timezone.now()
    batch = Batch(token=lease.token_new())
    with transaction.atomic():
        rows_of = kind.model._default_manager.defer(*kind.claim_defer)
        if keys is not None:
            named = rows_of.filter(**{f"{kind.key_field()}__in": keys})
            rows = lease.lock_named(named, wait=wait)
        else:
            # Open and due (``lock_due`` leaves out rows held by a live lease). No
            # tolerance: a retry due in a moment is not due yet. A platform's Retry-After
            # of one second is a promise we keep, not a figure to round away.
            open_due = rows_of.filter(kind.open() & Q(next_attempt_at__lte=now))
            rows = lease.lock_due(
                open_due, now=now, limit=limit, order_by=("next_attempt_at", "id")
            )
        batch.looked_at = len(rows)
        journal = kind.journal()
        changed: list[Any] = []
        ready: list[Any] = []
        for row in rows:
            key = kind.key_of(row)
            reason = kind.skip(row, now, force, changed) or _skip_reason(kind, row, now, force)
            if reason is not None:
                batch.verdicts[key] = SKIPPED
                batch.reasons[key] = reason
                if reason == "not due" and kind.wake_early and row.next_attempt_at:
                    # Woken a moment early (another host's clock, a broker's rounding):
                    # come back when it is due rather than wait for the sweeper.
                    early = (row.next_attempt_at - now).total_seconds()
                    if early <= MAX_COUNTDOWN_SECONDS:
                        kind.wake(key, countdown=early)
                continue
            if row.claim_token:
                # The last claim's lease ran out unanswered: its worker was lost.
                lease.clear(row)
                row.failures += 1
                row.last_error = WORKER_LOST
                if row.failures >= kind.max_failures():
                    lost = Answer(None, Outcome(TRANSIENT, WORKER_LOST), now, journal)
                    kind.dead_letter(row, lost)
                    changed.append(row)
                    batch.verdicts[key] = kind.status_of(row)
                    continue
            ready.append(row)
        claims, verdicts = kind.prepare(ready, batch.token, now, journal)
        batch.claims = claims
        batch.verdicts.update(verdicts)
        claimed = {c.pk for c in claims}
        until = now + timedelta(seconds=kind.lease_seconds())
        for row in ready:
            if row.pk in claimed:
                lease.stamp(row, token=batch.token, until=until)
                row.attempts += 1
            changed.append(row)
        kind.rows_save(changed, now, claiming=True)
        journal.write()
    return batch


@contextmanager
def holding(kind: OutboxKind, *, pk: int, token: str) -> Iterator[Any]:
    """A transaction with the row locked if it still holds this claim (else ``None``):
    progress is recorded only by the worker whose lease has not been taken over."""
    with lease.holding(kind.model._default_manager.filter(pk=pk), token=token) as row:
        yield row


def release(kind: OutboxKind, batch: Batch, *, sent: bool = True) -> int:
    """Give the batch's claims back unrecorded (the sender crashed; ``sent=False``: no
    call was started, so no attempt is counted): due again at once, not after the lease."""
    pks = [c.pk for c in batch.claims]
    rows = kind.model._default_manager.filter(pk__in=pks)
    return lease.release(rows, token=batch.token, attempted=sent)
