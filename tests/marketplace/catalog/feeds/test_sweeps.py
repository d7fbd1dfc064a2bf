"""The feed-run sweep: a run whose wake-up was lost is queued again; a run whose worker
died is queued again at most FEED_INGEST_MAX_ATTEMPTS times (a poison file), then failed
for good, until staff retry it by hand."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.catalog import dispatch
from marketplace.catalog.feeds.ingest import feed_run_claim, feed_run_ingest, feed_run_retry
from marketplace.catalog.models import FeedRun
from marketplace.catalog.sweeps import INGESTING_LEASE, RECEIVED_GRACE, feed_run_sweep
from tests.marketplace.catalog.feed_files import csv_bytes, product_row

pytestmark = pytest.mark.django_db

FILE = csv_bytes(product_row(n) for n in range(1, 4))


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The run ids the sweep queues for ingestion (instead of waking a worker)."""
    calls: list[int] = []
    monkeypatch.setattr(dispatch, "feed_run_ingest_enqueue", calls.append)
    return calls


def _worker_dies_ingesting(run: FeedRun) -> None:
    """An ingest starts (counting an attempt), then its worker is killed: the run stays
    "ingesting" and its start ages past the lease, as the sweep sees it."""
    assert feed_run_claim(run_id=run.pk) is not None
    FeedRun.objects.filter(pk=run.pk).update(
        started_at=timezone.now() - INGESTING_LEASE - timedelta(minutes=1),
        received_at=timezone.now() - RECEIVED_GRACE - timedelta(minutes=1),
    )


def test_a_run_whose_worker_died_three_times_fails_for_good_and_is_not_queued_again(
    received_run: Callable[..., FeedRun], queued: list[int], settings: Any
) -> None:
    settings.FEED_INGEST_MAX_ATTEMPTS = 3
    run = received_run(FILE)

    # The first two deaths: the sweep puts the run back and queues it again
    for attempt in (1, 2):
        _worker_dies_ingesting(run)
        assert feed_run_sweep() == 1
        run.refresh_from_db()
        assert (run.status, run.attempts) == ("received", attempt)
    assert queued == [run.pk, run.pk]

    # The third: failed for good, with the reason, and not queued
    _worker_dies_ingesting(run)
    assert feed_run_sweep() == 0
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.attempts == 3
    assert run.error == "the worker stopped while ingesting this file 3 times"
    assert run.finished_at is not None
    assert queued == [run.pk, run.pk]
    # Later sweeps leave it alone, and no worker claims it
    assert feed_run_sweep() == 0
    assert queued == [run.pk, run.pk]
    assert feed_run_ingest(run_id=run.pk) is None


def test_staff_retry_of_a_poison_run_resets_its_attempts_and_records_who(
    received_run: Callable[..., FeedRun], queued: list[int], settings: Any, staff_user: Any
) -> None:
    settings.FEED_INGEST_MAX_ATTEMPTS = 1
    run = received_run(FILE)
    _worker_dies_ingesting(run)
    feed_run_sweep()
    run.refresh_from_db()
    assert run.status == "failed"

    retried = feed_run_retry(run_id=run.pk, actor=staff_user)

    assert (retried.status, retried.attempts, retried.error) == ("received", 0, "")
    assert retried.retried_by == staff_user
    assert queued == [run.pk]
    finished = feed_run_ingest(run_id=run.pk)
    assert finished is not None
    assert (finished.status, finished.attempts) == ("succeeded", 1)


def test_a_run_ingesting_within_its_lease_is_left_to_its_worker(
    received_run: Callable[..., FeedRun], queued: list[int]
) -> None:
    run = received_run(FILE)
    assert feed_run_claim(run_id=run.pk) is not None

    assert feed_run_sweep() == 0

    run.refresh_from_db()
    assert run.status == "ingesting"
    assert queued == []
