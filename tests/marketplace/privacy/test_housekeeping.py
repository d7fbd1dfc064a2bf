"""Issue 30, point 9: every table that grows with traffic has a retention and a prune job
in beat: done return steps, per-order sync history, "Pull now" requests (the call log and
the catalog's tables have their own)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from marketplace.db import rows_prune
from marketplace.orders.models import SyncEvent
from marketplace.privacy.housekeeping import traffic_tables_prune
from marketplace.returns.models import PlatformStep, ReturnsRecordProblem, StepKind, StepStatus
from tests.marketplace.privacy.builders import buyer_order

pytestmark = pytest.mark.django_db


def _step(order: Any, kind: str, status: str, days_ago: int) -> PlatformStep:
    step = PlatformStep.objects.create(
        kind=kind,
        seller=order.seller,
        return_request=order.returns.first(),
        status=status,
        next_attempt_at=None,
    )
    PlatformStep.objects.filter(pk=step.pk).update(
        updated_at=timezone.now() - timedelta(days=days_ago)
    )
    return step


def test_old_rows_go_recent_rows_and_dead_letters_stay(settings: Any) -> None:
    settings.PLATFORM_STEP_RETENTION_DAYS = 30
    settings.SYNC_EVENT_RETENTION_DAYS = 180
    order = buyer_order()
    old_done = _step(order, StepKind.PUSH_RETURN, StepStatus.DONE, 40)
    new_done = _step(order, StepKind.COMPLETE_RETURN, StepStatus.DONE, 5)
    old_failed = _step(order, StepKind.REPORT_RETURN, StepStatus.FAILED, 400)
    now = timezone.now()
    events = [SyncEvent.objects.create(order=order, kind="pushed") for _ in range(3)]
    SyncEvent.objects.filter(pk__in=[e.pk for e in events[:2]]).update(
        created_at=now - timedelta(days=200)
    )
    problems = {
        key: ReturnsRecordProblem.objects.create(
            seller=order.seller,
            kind=ReturnsRecordProblem.Kind.REFUND,
            record_key=key,
            first_failed_at=now - timedelta(days=60),
            last_failed_at=now - timedelta(days=60),
            resolved_at=resolved,
            dead_at=dead,
        )
        for key, resolved, dead in [
            ("old-resolved", now - timedelta(days=40), None),
            ("new-resolved", now - timedelta(days=2), None),
            ("old-open", None, None),
            ("old-dead", None, now - timedelta(days=59)),
        ]
    }

    assert traffic_tables_prune() == {
        "platform_steps": 1,
        "sync_events": 2,
        "task_dead_letters": 0,
        "record_problems": 1,
    }

    assert set(PlatformStep.objects.values_list("pk", flat=True)) == {new_done.pk, old_failed.pk}
    assert not PlatformStep.objects.filter(pk=old_done.pk).exists()
    assert list(SyncEvent.objects.values_list("pk", flat=True)) == [events[2].pk]
    assert set(ReturnsRecordProblem.objects.values_list("record_key", flat=True)) == (
        set(problems) - {"old-resolved"}
    )
    assert set(traffic_tables_prune().values()) == {0}


def test_the_prune_deletes_in_batches() -> None:
    order = buyer_order()
    SyncEvent.objects.bulk_create([SyncEvent(order=order, kind="pushed") for _ in range(7)])
    assert rows_prune(SyncEvent.objects.all(), batch_size=3) == 7
    assert not SyncEvent.objects.exists()


def test_beat_runs_the_retention_and_prune_jobs() -> None:
    tasks = {job["task"] for job in django_settings.CELERY_BEAT_SCHEDULE.values()}
    assert {
        "marketplace.privacy.tasks.buyer_data_retention_task",
        "marketplace.privacy.tasks.pending_erasures_task",
        "marketplace.privacy.tasks.traffic_tables_prune_task",
        "marketplace.orders.tasks.platform_call_prune_task",
    } <= tasks
