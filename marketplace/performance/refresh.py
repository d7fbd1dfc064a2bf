"""The refresh job: every seller's scorecard for the day, set-based.

One transaction: the day's rows are replaced by a zero row per seller and window, then
each measure family fills its columns with one ``UPDATE ... FROM (aggregate)`` statement
(``statements.py``), rows older than ``PERFORMANCE_KEEP_DAYS`` are pruned, and the
crossings of thresholds are recorded (``crossings.py``). Readers see the previous run's
rows until it commits. No statement loops over sellers, and none reads history before
the longest window.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from marketplace.enqueue import task_enqueue
from marketplace.performance import statements
from marketplace.performance.crossings import (
    CrossingsRecorded,
    crossings_record,
    crossings_to_email,
)
from marketplace.performance.models import Scorecard

CROSSING_EMAILS_TASK = "marketplace.performance.tasks.crossing_emails_task"


@dataclass
class RefreshOutcome:
    day: str
    rows: int
    seconds_by_step: dict[str, float] = field(default_factory=dict)
    crossings: CrossingsRecorded | None = None


def moment_at(now: datetime) -> statements.Moment:
    day = now.astimezone(UTC).date()
    return statements.Moment(
        now=now,
        day=day,
        handling_days=int(settings.PERFORMANCE_HANDLING_DAYS),
        overdue_before=day - timedelta(days=int(settings.RETURN_AUTHORIZATION_DAYS)),
    )


def scorecards_refresh(*, now: datetime | None = None, crossings: bool = True) -> RefreshOutcome:
    """Compute every seller's figures as of ``now`` (default: now) into the day's rows.

    ``crossings=False`` only writes figures (a backfill of past days must not e-mail)."""
    moment = moment_at(now or timezone.now())
    steps: dict[str, float] = {}

    def run(name: str, sql: str, params: list[Any]) -> int:
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            count: int = cursor.rowcount
        steps[name] = round(time.perf_counter() - started, 4)
        return count

    with transaction.atomic():
        run(
            "clear_day",
            f"DELETE FROM {Scorecard._meta.db_table} WHERE day = %s",  # noqa: S608
            [connection.ops.adapt_datefield_value(moment.day)],
        )
        rows = run("day_rows", *statements.day_rows_insert(connection, moment))
        for family in statements.FAMILIES:
            run(family, *statements.family_update(connection, moment, family))
        keep_from = moment.day - timedelta(days=int(settings.PERFORMANCE_KEEP_DAYS))
        run(
            "prune",
            f"DELETE FROM {Scorecard._meta.db_table} WHERE day < %s",  # noqa: S608
            [connection.ops.adapt_datefield_value(keep_from)],
        )
        outcome = RefreshOutcome(day=moment.day.isoformat(), rows=rows, seconds_by_step=steps)
        if crossings:
            started = time.perf_counter()
            outcome.crossings = crossings_record(day=moment.day, now=moment.now)
            steps["crossings"] = round(time.perf_counter() - started, 4)
            # New crossings, and any whose e-mail failed last time (the task marks each
            # one sent, or records why it could not be).
            if crossings_to_email().exists():
                task_enqueue(CROSSING_EMAILS_TASK)
    return outcome
