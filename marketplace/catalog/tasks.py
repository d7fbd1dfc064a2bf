"""Catalog tasks: each loads what it needs and calls one service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from marketplace.catalog import sweeps
from marketplace.catalog.feeds import ingest, retention
from marketplace.catalog.listing_status import edrts_sender


# The broker's visibility_timeout is above time_limit (settings/celery.py).
@shared_task(
    acks_late=True,
    soft_time_limit=settings.FEED_INGEST_SOFT_TIME_LIMIT,
    time_limit=settings.FEED_INGEST_TIME_LIMIT,
)
def feed_run_ingest_task(run_id: int) -> None:
    run = ingest.feed_run_ingest(run_id=run_id)
    if run is not None:
        # The run's status changes (recorded by triggers) are committed: send them.
        edrts_sender.status_sync_kick(seller_id=run.seller_id)


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


# EDRTS: on their own queue ("edrts", settings/celery.py), so a long feed ingestion on the
# catalog queue never delays a status the seller waits for.
@shared_task(acks_late=True, soft_time_limit=150, time_limit=170)
def status_sync_drain_task(seller_id: int) -> None:
    edrts_sender.status_sync_drain(seller_id=seller_id)


@shared_task
def status_sync_sweep_task() -> int:
    return edrts_sender.status_sync_sweep()


@shared_task
def status_changes_prune_task() -> int:
    return edrts_sender.status_changes_prune()
