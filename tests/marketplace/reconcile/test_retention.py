"""Reconciliation runs and findings are pruned after RECONCILE_RETENTION_DAYS by a daily
job; a finding still open (left to staff) is never deleted, nor the run that holds it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from marketplace.reconcile.models import (
    Finding,
    FindingAction,
    FindingStatus,
    ReconcileRun,
    RunTrigger,
)
from marketplace.reconcile.retention import reconcile_rows_prune
from marketplace.reconcile.tasks import reconcile_rows_prune_task
from sellers.models import Seller

pytestmark = pytest.mark.django_db


def _run(seller: Seller, days_ago: int) -> ReconcileRun:
    run = ReconcileRun.objects.create(seller=seller, trigger=RunTrigger.SCHEDULE)
    ReconcileRun.objects.filter(pk=run.pk).update(
        started_at=timezone.now() - timedelta(days=days_ago)
    )
    return run


def _finding(run: ReconcileRun, key: str, status: str, days_ago: int, settled: int = 0) -> str:
    now = timezone.now()
    action = FindingAction.RESENT if status == FindingStatus.REPAIRED else FindingAction.STAFF
    finding = Finding.objects.create(
        run=run,
        seller_id=run.seller_id,
        kind="return_money",
        object_type="return",
        object_key=key,
        action=action,
        status=status,
        settled_at=now - timedelta(days=settled) if status == FindingStatus.SETTLED else None,
    )
    Finding.objects.filter(pk=finding.pk).update(created_at=now - timedelta(days=days_ago))
    return key


def test_old_done_findings_and_their_runs_go_open_and_recent_ones_stay(
    settings: Any, seller: Seller
) -> None:
    settings.RECONCILE_RETENTION_DAYS = 90
    old_run = _run(seller, 120)
    repaired = _finding(old_run, "MP-1/R1", FindingStatus.REPAIRED, 120)
    settled = _finding(old_run, "MP-2/R1", FindingStatus.SETTLED, 120, settled=100)
    old_empty_run = _run(seller, 95)
    held_run = _run(seller, 200)
    still_open = _finding(held_run, "MP-3/R1", FindingStatus.OPEN, 200)
    held_too = _finding(held_run, "MP-4/R1", FindingStatus.REPAIRED, 200)
    # Settled lately (30 days ago) though found long ago: staff's note stays the period.
    late_run = _run(seller, 150)
    settled_lately = _finding(late_run, "MP-5/R1", FindingStatus.SETTLED, 150, settled=30)
    recent_run = _run(seller, 10)
    recent = _finding(recent_run, "MP-6/R1", FindingStatus.REPAIRED, 10)
    recent_empty_run = _run(seller, 1)

    assert reconcile_rows_prune(batch_size=2) == {"findings": 3, "runs": 2}

    kept = set(Finding.objects.values_list("object_key", flat=True))
    assert kept == {still_open, settled_lately, recent}
    assert not kept & {repaired, settled, held_too}
    assert set(ReconcileRun.objects.values_list("pk", flat=True)) == {
        held_run.pk,
        late_run.pk,
        recent_run.pk,
        recent_empty_run.pk,
    }
    assert not ReconcileRun.objects.filter(pk__in=[old_run.pk, old_empty_run.pk]).exists()
    # The open finding keeps its run (and both versions) for staff.
    assert Finding.objects.get(object_key=still_open).run_id == held_run.pk
    assert reconcile_rows_prune() == {"findings": 0, "runs": 0}


def test_a_settled_finding_goes_after_the_retention_as_its_run_does(
    settings: Any, seller: Seller
) -> None:
    settings.RECONCILE_RETENTION_DAYS = 90
    held_run = _run(seller, 200)
    _finding(held_run, "MP-3/R1", FindingStatus.OPEN, 200)
    # Staff settle it (a long time later, now past the retention too): run and finding go.
    Finding.objects.update(
        status=FindingStatus.SETTLED, settled_at=timezone.now() - timedelta(days=91)
    )
    assert reconcile_rows_prune_task() == {"findings": 1, "runs": 1}
    assert not ReconcileRun.objects.exists()


def test_beat_runs_the_prune_daily() -> None:
    jobs = {job["task"]: job["schedule"] for job in django_settings.CELERY_BEAT_SCHEDULE.values()}
    assert jobs["marketplace.reconcile.tasks.reconcile_rows_prune_task"] == 86400.0
    assert django_settings.RECONCILE_RETENTION_DAYS == 90
