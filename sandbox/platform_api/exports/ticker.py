"""Scheduled export runs: started by the Platform API's ticker loop
(``sandbox.platform_api.ticker``) when an export's ``next_run_time`` (sandbox clock) has
come; that time then moves to the cron's next match. A run still going is skipped."""

from sandbox.common.schedule import due_start
from sandbox.platform_api.exports.models import Export
from sandbox.platform_api.exports.runs import run_in_background, run_start


def scheduled_runs_start_due() -> int:
    """Start the due export runs; how many started."""

    def start(export: Export) -> None:
        run_in_background(run=run_start(export=export, trigger="schedule"))

    return due_start(Export, start)
