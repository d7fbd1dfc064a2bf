"""Scheduled import runs, started by the exports' ticker thread (``sandbox.exports.ticker``)
when an import's ``next_run_time`` (sandbox clock) has come; that time then moves to the
cron's next match. A run still going when its time comes is skipped."""

from sandbox.exports.ticker import due_start
from sandbox.imports.models import Import
from sandbox.imports.runs import run_in_background, run_start


def scheduled_imports_start_due() -> int:
    """Start the due import runs; how many started."""

    def start(source: Import) -> None:
        run_start(source=source)
        run_in_background(source=source)

    return due_start(Import, start)
