"""Queueing the catalog's Celery tasks. The tasks import the services; the services queue
work through here, by the task's name, so neither imports the other. (The app registers
the tasks at start, ``apps.py``: a registered task runs eagerly when Celery is so set.)"""

from __future__ import annotations

from django.db import transaction

from marketplace.celery import app

FEED_RUN_INGEST = "marketplace.catalog.tasks.feed_run_ingest_task"


def feed_run_ingest_enqueue(run_id: int) -> None:
    """Queue the run's ingestion once the current transaction commits."""
    transaction.on_commit(lambda: app.signature(FEED_RUN_INGEST, args=(run_id,)).delay())
