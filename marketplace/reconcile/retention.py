"""The daily prune of reconciliation rows past ``RECONCILE_RETENTION_DAYS``.

* ``Finding``: one done with (repaired by the app, or settled by staff) once it is older
  than the retention; a settled one also counts from its settlement, so staff's note
  stays the full period after they wrote it. An open finding (left to staff) is never
  deleted, however old: it is work not done.
* ``ReconcileRun``: older than the retention and holding no finding any more. A finding's
  run is deleted with CASCADE, so a run that still holds an open (or a recent) finding
  stays with it.

Findings first, then runs: a run whose findings have all gone goes in the same prune.
Both in bounded batches (``marketplace.db.rows_prune``): old rows have the lowest ids, so
each batch reads from the start of the primary key.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from marketplace.db import rows_prune
from marketplace.reconcile.models import Finding, FindingStatus, ReconcileRun


def reconcile_rows_prune(*, now: datetime | None = None, batch_size: int = 5000) -> dict[str, int]:
    """Delete past-retention findings (never an open one) and runs; returns how many."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.RECONCILE_RETENTION_DAYS)
    settled_long_ago = Q(settled_at__lt=cutoff) | Q(settled_at__isnull=True)
    done = Q(status=FindingStatus.REPAIRED) | (Q(status=FindingStatus.SETTLED) & settled_long_ago)
    findings = rows_prune(
        Finding.objects.filter(done, created_at__lt=cutoff), batch_size=batch_size
    )
    runs = rows_prune(
        ReconcileRun.objects.filter(started_at__lt=cutoff).filter(
            ~Exists(Finding.objects.filter(run=OuterRef("pk")))
        ),
        batch_size=batch_size,
    )
    return {"findings": findings, "runs": runs}
