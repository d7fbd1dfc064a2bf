"""A Celery app for ``test_broker_restart``: the marketplace's consumer and task settings
(acks late, prefetch 1), a slow task to keep messages unacked and a task that leaves a
mark, against the private Redis named by ``BROKER_RESTART_URL``. Not the marketplace app:
its tasks need a database, and what is tested is the worker's reconnect alone."""

from __future__ import annotations

import os
import time
from pathlib import Path

from celery import Celery

app = Celery("broker_restart", broker=os.environ.get("BROKER_RESTART_URL", "memory://"))
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    broker_transport_options={"visibility_timeout": 30},
    worker_hijack_root_logger=False,
)
if os.environ.get("BROKER_RESTART_CONSUMER"):
    app.conf.worker_consumer = os.environ["BROKER_RESTART_CONSUMER"]


@app.task
def slow(seconds: float) -> None:
    time.sleep(seconds)


@app.task
def mark(path: str) -> None:
    Path(path).write_text("ran")
