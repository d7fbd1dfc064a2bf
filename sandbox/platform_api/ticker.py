"""The Platform API's one background loop: every half second it starts the exports and the
imports whose scheduled time (sandbox clock) has come."""

import logging

from sandbox.common.loop import loop_start
from sandbox.platform_api.exports.ticker import scheduled_runs_start_due
from sandbox.platform_api.imports.ticker import scheduled_imports_start_due

log = logging.getLogger(__name__)

TICK_SECONDS = 0.5


def _tick() -> None:
    jobs = {"export": scheduled_runs_start_due, "import": scheduled_imports_start_due}
    for name, job in jobs.items():
        try:
            job()
        except Exception:
            # One failing kind must not stop the other's runs; the loop logs the rest.
            log.exception("scheduled %s runs failed", name)


def ticker_start() -> None:
    """Start the ticker once per server process."""
    loop_start("sandbox-schedule-ticker", _tick, pause_seconds=TICK_SECONDS)
