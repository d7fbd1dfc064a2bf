"""Scheduled runs: a background thread in the sandbox process (like the auto-ship timer)
starts every export whose ``next_run_time`` (sandbox clock) has come, then moves that
time to the cron's next match. A run still going when its time comes is skipped."""

import logging
import threading
import time

from django.db import close_old_connections

from sandbox import clock
from sandbox.api_php.errors import ApiError
from sandbox.exports.models import Export
from sandbox.exports.runs import run_in_background, run_start
from sandbox.exports.schedule import next_run

log = logging.getLogger(__name__)

TICK_SECONDS = 0.5
_thread: threading.Thread | None = None


def scheduled_runs_start_due() -> int:
    """Start the due runs; how many started."""
    now = clock.now()
    started = 0
    for export in Export.objects.filter(
        cron__isnull=False, paused=False, next_run_time__lte=now
    ).order_by("next_run_time"):
        # Claim the slot first: a slow run never makes the ticker start it twice.
        moved = Export.objects.filter(id=export.id, next_run_time=export.next_run_time).update(
            next_run_time=next_run(export.cron, now)
        )
        if not moved:
            continue
        try:
            run = run_start(export=export, trigger="schedule")
        except ApiError:
            log.info("export %s: scheduled run skipped, a run is still going", export.id)
            continue
        run_in_background(run=run)
        started += 1
    return started


def _loop() -> None:
    while True:
        time.sleep(TICK_SECONDS)
        try:
            scheduled_runs_start_due()
        except Exception:
            log.exception("scheduled export runs failed")
        finally:
            close_old_connections()


def ticker_start() -> None:
    """Start the ticker once per server process."""
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_loop, name="sandbox-export-ticker", daemon=True)
        _thread.start()
