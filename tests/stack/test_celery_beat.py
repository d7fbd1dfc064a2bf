"""``celery beat`` starts on a fresh checkout whatever the broker (its schedule folder
did not exist when REDIS_URL was set, and beat crashed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs a Redis broker (REDIS_URL)")
def test_beat_starts_with_redis_and_no_data_folder_yet(tmp_path: Path) -> None:
    # Given a Redis broker and a data folder that does not exist yet
    data_dir = tmp_path / "fresh" / "celery"
    env = {**os.environ, "CELERY_DATA_DIR": str(data_dir), "DJANGO_ENV": "development"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    # When beat starts
    beat = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "marketplace", "beat", "--loglevel", "INFO"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # Then it writes its schedule there and keeps running
        deadline = time.monotonic() + 30
        while not list(data_dir.glob("celerybeat-schedule*")) and beat.poll() is None:
            assert time.monotonic() < deadline, "beat wrote no schedule file in 30 s"
            time.sleep(0.2)
        assert beat.poll() is None, beat.communicate()[0]
    finally:
        beat.terminate()
        beat.wait(timeout=20)


@pytest.mark.parametrize(
    "task",
    [
        "marketplace.catalog.tasks.feed_run_ingest_task",
        "marketplace.catalog.tasks.feed_run_sweep_task",
        "marketplace.catalog.tasks.feed_status_sweep_task",
        "marketplace.catalog.tasks.provisioned_cleanup_sweep_task",
        "marketplace.catalog.tasks.feed_files_prune_task",
    ],
)
def test_catalog_tasks_and_sweeps_route_to_the_catalog_queue(task: str) -> None:
    from marketplace.celery import app

    assert app.amqp.router.route({}, task)["queue"].name == "catalog"


@pytest.mark.parametrize(
    ("task", "queue"),
    [
        ("marketplace.orders.tasks.order_push_task", "push"),
        ("sellers.tasks.connection_refresh_task", "tokens"),
        ("marketplace.orders.tasks.order_sync_sweep_task", "celery"),
    ],
)
def test_other_work_stays_off_the_catalog_queue(task: str, queue: str) -> None:
    from marketplace.celery import app

    assert app.amqp.router.route({}, task)["queue"].name == queue


def test_every_catalog_beat_job_lands_on_the_catalog_queue() -> None:
    from django.conf import settings

    from marketplace.celery import app

    # The listing statuses sent back through EDRTS have their own queue: a feed's long
    # ingestion on the catalog queue must not delay them.
    edrts = {
        "marketplace.catalog.tasks.status_sync_sweep_task",
        "marketplace.catalog.tasks.status_sync_drain_task",
    }
    catalog = [
        job["task"]
        for job in settings.CELERY_BEAT_SCHEDULE.values()
        if job["task"].startswith("marketplace.catalog.")
    ]
    assert catalog
    for task in catalog:
        expected = "edrts" if task in edrts else "catalog"
        assert app.amqp.router.route({}, task)["queue"].name == expected
    assert (
        app.amqp.router.route({}, "marketplace.catalog.tasks.status_sync_drain_task")["queue"].name
        == "edrts"
    )
