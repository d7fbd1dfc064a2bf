"""Catalog tasks: each loads what it needs and calls one service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from marketplace.catalog import ingest, retention, sweeps


# The broker's visibility_timeout is above time_limit (settings/celery.py).
@shared_task(
    acks_late=True,
    soft_time_limit=settings.FEED_INGEST_SOFT_TIME_LIMIT,
    time_limit=settings.FEED_INGEST_TIME_LIMIT,
)
def feed_run_ingest_task(run_id: int) -> None:
    ingest.feed_run_ingest(run_id=run_id)


@shared_task
def feed_run_sweep_task() -> None:
    sweeps.feed_run_sweep()


@shared_task
def feed_status_sweep_task() -> None:
    sweeps.provisioned_status_sweep()


@shared_task
def provisioned_cleanup_sweep_task() -> None:
    sweeps.provisioned_cleanup_sweep()


@shared_task
def feed_files_prune_task() -> int:
    return retention.feed_files_prune()
