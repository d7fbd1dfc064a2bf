"""Pruning of the tables that grow with traffic and are not pruned by their own app
(the call log: ``platform.calllog``; catalog files and status rows: the catalog's).

Each prune is set-based (``marketplace.db.rows_prune``): one ``DELETE … WHERE id IN
(SELECT id … LIMIT n)`` per batch (no row read into Python), repeated until nothing is
left, so a first run over a long history neither holds a long lock nor grows the worker.

* ``PlatformStep``: done steps after ``PLATFORM_STEP_RETENTION_DAYS``; a dead letter
  (failed) stays until staff act on it, so it is never lost.
* ``SyncEvent``: the per-order history after ``SYNC_EVENT_RETENTION_DAYS``.
* ``TaskDeadLetter``: after ``SYNC_EVENT_RETENTION_DAYS`` too (staff acted or never will).
* ``ReturnsRecordProblem``: a listed refund or return that failed to store and later went
  through (``resolved_at``), after ``PLATFORM_STEP_RETENTION_DAYS``; an open one or a dead
  letter stays until it resolves or staff act.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from marketplace.db import rows_prune
from marketplace.orders.models import SyncEvent
from marketplace.privacy.models import TaskDeadLetter
from marketplace.returns.models import PlatformStep, ReturnsRecordProblem, StepStatus


def traffic_tables_prune(*, now: datetime | None = None) -> dict[str, int]:
    now = now or timezone.now()
    days = timedelta(days=1)
    return {
        "platform_steps": rows_prune(
            PlatformStep.objects.filter(
                status=StepStatus.DONE,
                updated_at__lt=now - days * settings.PLATFORM_STEP_RETENTION_DAYS,
            )
        ),
        "sync_events": rows_prune(
            SyncEvent.objects.filter(created_at__lt=now - days * settings.SYNC_EVENT_RETENTION_DAYS)
        ),
        "task_dead_letters": rows_prune(
            TaskDeadLetter.objects.filter(
                created_at__lt=now - days * settings.SYNC_EVENT_RETENTION_DAYS
            )
        ),
        "record_problems": rows_prune(
            ReturnsRecordProblem.objects.filter(
                resolved_at__lt=now - days * settings.PLATFORM_STEP_RETENTION_DAYS
            )
        ),
    }
