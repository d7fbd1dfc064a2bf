"""When work stalls: the sweeper, and staff's retry of a dead letter.

The broker only wakes workers; what is due is in the database. The sweeper (beat) finds
rows overdue with nothing on its way (a lost wake-up, a retry that came due without its
own message, a claim whose worker died) and wakes a drain for them. Staff make a dead
letter (or anything waiting) due again now, failures forgotten.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from marketplace.outbox import lease
from marketplace.outbox.kind import OutboxKind


def overdue_wake(kind: OutboxKind, *, limit: int, now: datetime | None = None) -> int:
    """Wake drains for overdue rows; returns how many were found (at most ``limit``)."""
    now = now or timezone.now()
    manager = kind.model._default_manager
    # A row without a due time is found by no drain: make it due (none is written so
    # today; this repairs rows from older code or hand edits).
    if kind.due_time_required:
        manager.filter(kind.open(), next_attempt_at__isnull=True, failures=0).update(
            next_attempt_at=now, updated_at=now
        )
    late = manager.filter(kind.late(now) & lease.unclaimed(now)).order_by()
    keys = [int(k) for k in late.values_list(kind.key_field(), flat=True)[:limit]]
    if keys:
        kind.sweep_wake(keys)
    return len(keys)


def due_again(kind: OutboxKind, rows: QuerySet[Any], *, now: datetime | None = None) -> int:
    """Staff's retry: these rows due now, failures and attempts forgotten. A live claim is
    left alone (its worker records, then the row is sent again); an expired one is
    cleared, so the retry is not counted as a lost worker. Returns how many rows."""
    now = now or timezone.now()
    lease.release_lapsed(rows, now=now)
    return rows.update(**kind.due_again_fields(now))
