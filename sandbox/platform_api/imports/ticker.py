"""Scheduled import runs: started by the Platform API's ticker loop
(``sandbox.platform_api.ticker``) when an import's ``next_run_time`` (sandbox clock) has
come; that time then moves to the cron's next match. A run still going is skipped."""

from sandbox.common.schedule import due_start
from sandbox.platform_api.imports.models import Import
from sandbox.platform_api.imports.runs import run_in_background, run_start


def scheduled_imports_start_due() -> int:
    """Start the due import runs; how many started."""

    def start(source: Import) -> None:
        run_start(source=source)
        run_in_background(source=source)

    return due_start(Import, start)
