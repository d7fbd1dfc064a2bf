"""Scheduled runs: one background thread in the sandbox process (like the auto-ship timer)
starts every export, and every import (``sandbox.imports.ticker``), whose
``next_run_time`` (sandbox clock) has come, then moves that time to the cron's next
match. A run still going when its time comes is skipped."""

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import close_old_connections, models

from sandbox import clock
from sandbox.api_php.errors import ApiError
from sandbox.exports.models import Export
from sandbox.exports.runs import run_in_background, run_start
from sandbox.exports.schedule import next_run

log = logging.getLogger(__name__)

TICK_SECONDS = 0.5
_thread: threading.Thread | None = None


def due_start(model: type[models.Model], start: Callable[[Any], None]) -> int:
    """Start the due runs of ``model``'s scheduled rows with ``start``; how many started.

    ``start`` raises ``ApiError`` when the row's previous run is still going."""
    now = clock.now()
    started = 0
    for row in model.objects.filter(
        cron__isnull=False, paused=False, next_run_time__lte=now
    ).order_by("next_run_time"):
        # Claim the slot first: a slow run never makes the ticker start it twice.
        moved = model.objects.filter(id=row.id, next_run_time=row.next_run_time).update(
            next_run_time=next_run(row.cron, now)
        )
        if not moved:
            continue
        try:
            start(row)
        except ApiError:
            log.info("%s: scheduled run skipped, a run is still going", row)
            continue
        started += 1
    return started


def scheduled_runs_start_due() -> int:
    """Start the due export runs; how many started."""

    def start(export: Export) -> None:
        run_in_background(run=run_start(export=export, trigger="schedule"))

    return due_start(Export, start)


def _loop() -> None:
    from sandbox.imports.ticker import scheduled_imports_start_due

    jobs = {"export": scheduled_runs_start_due, "import": scheduled_imports_start_due}
    while True:
        time.sleep(TICK_SECONDS)
        for name, job in jobs.items():
            try:
                job()
            except Exception:
                log.exception("scheduled %s runs failed", name)
            finally:
                close_old_connections()


def ticker_start() -> None:
    """Start the ticker once per server process."""
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_loop, name="sandbox-schedule-ticker", daemon=True)
        _thread.start()
