"""Queueing the catalog's Celery tasks. The tasks import the services; the services queue
work through here, by the task's name, so neither imports the other. (The app registers
the tasks at start, ``apps.py``: a registered task runs eagerly when Celery is so set.)"""

from __future__ import annotations

from django.db import transaction

from marketplace.celery import app

FEED_RUN_INGEST = "marketplace.catalog.tasks.feed_run_ingest_task"
STATUS_SYNC_DRAIN = "marketplace.catalog.tasks.status_sync_drain_task"


def feed_run_ingest_enqueue(run_id: int) -> None:
    """Queue the run's ingestion once the current transaction commits."""
    transaction.on_commit(lambda: app.signature(FEED_RUN_INGEST, args=(run_id,)).delay())


def status_sync_drain_enqueue(seller_id: int, *, countdown: float = 0.0) -> None:
    """Queue a drain of the seller's listing-status outbox once the current transaction
    commits (``countdown`` seconds later: a linger, a 429's wait, a backoff)."""
    signature = app.signature(STATUS_SYNC_DRAIN, args=(seller_id,))
    if countdown > 0 and app.conf.task_always_eager:
        # Eager Celery (tests) runs a countdown at once: a drain lingering for a second
        # would call itself in a loop. The beat sweep comes back instead.
        return
    if countdown > 0:
        transaction.on_commit(lambda: signature.apply_async(countdown=countdown))
    else:
        transaction.on_commit(lambda: signature.delay())
