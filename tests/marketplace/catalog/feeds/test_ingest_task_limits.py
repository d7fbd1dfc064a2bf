"""A long ingest is never delivered to a second worker: the Redis broker's visibility
timeout is above the ingest task's hard time limit, and the sweep's lease above both."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest

from marketplace.catalog import sweeps
from marketplace.catalog.tasks import feed_run_ingest_task


def test_the_broker_visibility_timeout_outlasts_the_longest_ingest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The Redis broker's options, whatever broker this test run uses
    from marketplace.settings import base, celery

    monkeypatch.setattr(base, "REDIS_URL", "redis://127.0.0.1:6379/15")
    try:
        options = importlib.reload(celery).CELERY_BROKER_TRANSPORT_OPTIONS
    finally:
        monkeypatch.undo()
        importlib.reload(celery)

    time_limit = feed_run_ingest_task.time_limit
    assert time_limit is not None
    assert feed_run_ingest_task.soft_time_limit < time_limit
    assert options["visibility_timeout"] > time_limit
    # A run still "ingesting" after its lease lost its worker: never one still running.
    assert timedelta(seconds=time_limit) < sweeps.INGESTING_LEASE
