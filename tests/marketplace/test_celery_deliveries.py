"""Issue 30, point 9: a task message whose worker dies every time (acks_late +
reject_on_worker_lost requeue it) runs at most CELERY_TASK_MAX_DELIVERIES times, then is
dropped with a dead-letter line in the log (``marketplace.celery.DeliveryCountedTask``;
the count is in Redis, keyed by the task's id and retry number)."""

from __future__ import annotations

from typing import Any

import pytest
from celery import shared_task
from django.utils import timezone

from marketplace.privacy.models import TaskDeadLetter


@shared_task(bind=True)
def _counted_probe(self: Any, runs: list[int]) -> str:
    runs.append(1)
    return "ran"


@pytest.mark.django_db
def test_a_task_delivered_past_the_cap_is_dropped_with_a_dead_letter_log(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.CELERY_TASK_MAX_DELIVERIES = 3
    runs: list[int] = []
    task_id = f"probe-{timezone.now().timestamp()}"
    results = []
    for _ in range(5):  # the same message redelivered after each worker death
        _counted_probe.push_request(id=task_id, retries=0, delivery_info={"routing_key": "x"})
        try:
            results.append(_counted_probe(runs))
        finally:
            _counted_probe.pop_request()
    assert results == ["ran", "ran", "ran", None, None]
    assert len(runs) == 3
    assert "dead letter: task" in caplog.text
    assert f"[{task_id}] delivered 4 times" in caplog.text
    # Staff see it in the admin's dead letters: one row per dropped delivery.
    letters = TaskDeadLetter.objects.filter(task_id=task_id)
    assert sorted(letters.values_list("deliveries", flat=True)) == [4, 5]
    assert letters.first().task_name.endswith("_counted_probe")
    # A retry is a new delivery count (its own retry number); a direct call is not counted.
    _counted_probe.push_request(id=task_id, retries=1, delivery_info={"routing_key": "x"})
    try:
        assert _counted_probe(runs) == "ran"
    finally:
        _counted_probe.pop_request()
    assert _counted_probe(runs) == "ran"
