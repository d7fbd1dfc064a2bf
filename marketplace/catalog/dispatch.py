"""Queueing the catalog's Celery tasks, by name through ``marketplace.enqueue`` (the tasks
import the services; the services queue work through here, so neither imports the other)."""

from __future__ import annotations

from marketplace.enqueue import task_enqueue

FEED_RUN_INGEST_TASK = "marketplace.catalog.tasks.feed_run_ingest_task"
STATUS_SYNC_DRAIN_TASK = "marketplace.catalog.tasks.status_sync_drain_task"


def feed_run_ingest_enqueue(run_id: int) -> None:
    """Queue the run's ingestion once the current transaction commits."""
    task_enqueue(FEED_RUN_INGEST_TASK, run_id)


def status_sync_drain_enqueue(seller_id: int, *, countdown: float = 0.0) -> None:
    """Queue a drain of the seller's listing-status outbox once the current transaction
    commits (``countdown`` seconds later: a linger, a 429's wait, a backoff)."""
    task_enqueue(STATUS_SYNC_DRAIN_TASK, seller_id, countdown=countdown)
