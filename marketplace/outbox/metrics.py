"""What every outbox kind shows on /metrics: its backlog, how late it runs, its dead letters."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Min, Q
from django.utils import timezone

from marketplace.outbox import lease
from marketplace.outbox.kind import OutboxKind


@dataclass(frozen=True)
class Backlog:
    due: int  # open and due now
    oldest_due_seconds: float  # how long the oldest of them has been due
    claimed: int  # being sent (a live lease)
    dead: int  # dead letters: waiting for a person


def backlog(kind: OutboxKind, *, now: datetime | None = None) -> Backlog:
    """One aggregate query over the kind's table."""
    now = now or timezone.now()
    due = kind.open() & Q(next_attempt_at__lte=now)
    row = kind.model._default_manager.aggregate(
        due=Count("pk", filter=due),
        oldest=Min("next_attempt_at", filter=due),
        claimed=Count("pk", filter=lease.held(now)),
        dead=Count("pk", filter=kind.dead()),
    )
    oldest = row["oldest"]
    return Backlog(
        due=int(row["due"] or 0),
        oldest_due_seconds=max(0.0, (now - oldest).total_seconds()) if oldest else 0.0,
        claimed=int(row["claimed"] or 0),
        dead=int(row["dead"] or 0),
    )


def dead_letters(kind: OutboxKind) -> int:
    """The kind's dead letters: work that waits for a person (one count)."""
    return kind.model._default_manager.filter(kind.dead()).count()
