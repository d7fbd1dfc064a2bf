"""Each seller's pull schedule: when the next pull is due and why (``PullSchedule``).

Cost follows activity (DESIGN.md, principle 6):

* a pull that finds open work (``open_work_reasons``: unsettled orders, a change it just
  read …) schedules the next one ``PULL_INTERVAL_SECONDS`` later;
* a pull that finds nothing open doubles the wait, step by step, up to
  ``PULL_IDLE_CEILING_SECONDS``;
* something placed or changed for the seller (``pull_schedule_wake``, called in the same
  transaction as the order write) brings a backed-off seller back to the short interval;
* a failing pull is retried later and later, up to ``PULL_FAILURE_CEILING_SECONDS``;
* the fan-out claims due rows in bounded batches through ``next_pull_at``'s index, one
  statement per batch, moving each to a lease (``PULL_LEASE_SECONDS``) so two beats never
  queue the same pull twice and a lost message is sent again when the lease runs out.

This module sits below the apps whose work makes a seller worth pulling (orders; returns
and refunds), so they register their rule here (``open_work_check_register``, from their
``AppConfig.ready``) instead of this module importing them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection as db_connection
from django.db import transaction
from django.utils import timezone

from sellers.models import PullSchedule

# Reasons staff read on the dashboard.
REASON_CONNECTED = "connected"
REASON_PULL_NOW = "pull now"
REASON_NOT_CONNECTED = "not connected"
REASON_ORDER_PLACED = "new order placed"
REASON_ORDER_CHANGED = "order changed"

# A rule for "this seller has open work": returns a reason in words, or "" when none.
OpenWorkCheck = Callable[[int], str]
_open_work_checks: dict[str, OpenWorkCheck] = {}


def open_work_check_register(name: str, check: OpenWorkCheck) -> None:
    """Add a rule (idempotent by ``name``): e.g. orders' "open orders", returns' "open returns"."""
    _open_work_checks[name] = check


# More work a seller's pull brings along (returns and refunds register theirs): called
# after each pull that reached the platform, so it follows the same schedule and never
# needs a fan-out over every seller of its own.
AfterPull = Callable[[int], None]
_after_pull: dict[str, AfterPull] = {}


def after_pull_register(name: str, step: AfterPull) -> None:
    """Add a step run after a seller's successful pull (idempotent by ``name``)."""
    _after_pull[name] = step


def after_pull_run(*, seller_id: int) -> None:
    for step in _after_pull.values():
        step(seller_id)


def open_work_reasons(*, seller_id: int) -> list[str]:
    """Why ``seller_id`` should be pulled at the short interval (empty: nothing is open).

    One indexed query per registered rule, each bounded by what is open for the seller.
    """
    reasons = []
    for check in _open_work_checks.values():
        reason = check(seller_id)
        if reason:
            reasons.append(reason)
    return reasons


def _interval() -> timedelta:
    return timedelta(seconds=settings.PULL_INTERVAL_SECONDS)


def _jitter(seconds: float) -> timedelta:
    # ±10 %: sellers that went idle together (a deploy, a migration) spread out again.
    return timedelta(seconds=seconds * random.uniform(0.9, 1.1))


def idle_wait(steps: int) -> float:
    """Seconds until the next pull after ``steps`` idle pulls in a row (no jitter)."""
    return min(
        settings.PULL_IDLE_CEILING_SECONDS,
        settings.PULL_INTERVAL_SECONDS * 2 ** min(steps, 30),
    )


def failure_wait(failures: int) -> float:
    return min(
        settings.PULL_FAILURE_CEILING_SECONDS,
        settings.PULL_INTERVAL_SECONDS * 2 ** min(max(failures - 1, 0), 30),
    )


# --- writes ---------------------------------------------------------------------------


def pull_schedule_start(*, seller_id: int, reason: str = REASON_CONNECTED) -> None:
    """A (re)connected seller: their pull is due now (the row is made if missing)."""
    now = timezone.now()
    PullSchedule.objects.update_or_create(
        seller_id=seller_id,
        defaults={"next_pull_at": now, "reason": reason, "idle_steps": 0, "failures": 0},
    )


def pull_schedule_wake(*, seller_id: int, reason: str, now: datetime | None = None) -> bool:
    """Something was placed or changed for the seller: pull within the short interval.

    Call inside the transaction that writes the change. Writes only when the seller was
    backed off (their next pull later than one interval from now), so a busy seller's row
    is not written on every order; an unscheduled seller (not connected) is left alone.
    Returns whether the schedule moved.
    """
    now = now or timezone.now()
    soon = now + _interval()
    return bool(
        PullSchedule.objects.filter(seller_id=seller_id, next_pull_at__gt=soon).update(
            next_pull_at=soon, reason=reason, idle_steps=0, updated_at=now
        )
    )


def pull_schedule_after_pull(
    *,
    seller_id: int,
    failed: bool = False,
    connected: bool = True,
    reasons: list[str] | None = None,
    started_at: datetime | None = None,
    now: datetime | None = None,
) -> PullSchedule | None:
    """Schedule the seller's next pull from what the pull that just ended found.

    ``reasons``: open work found (``open_work_reasons`` plus what the pull itself saw);
    empty means idle. The wait counts from when the pull was queued (or ``started_at``),
    so a seller with open work is pulled every interval, not every interval plus the
    queueing and the pull's duration. One row lock, one UPDATE.
    """
    now = now or timezone.now()
    with transaction.atomic():
        schedule = PullSchedule.objects.select_for_update().filter(seller_id=seller_id).first()
        if schedule is None:
            if not connected:
                return None
            schedule = PullSchedule.objects.create(seller_id=seller_id)
        # The wait counts from when the pull was queued (a beat tick, so the next one
        # falls on a tick too), else from its start: not from its end.
        queued = schedule.queued_at if schedule.is_queued else None
        base = min(queued or started_at or now, now)
        schedule.last_pulled_at = now
        if not connected:
            schedule.next_pull_at = None
            schedule.reason = REASON_NOT_CONNECTED
        elif failed:
            schedule.failures += 1
            wait = failure_wait(schedule.failures)
            schedule.next_pull_at = max(now, base + timedelta(seconds=wait))
            schedule.reason = f"failing — retry {schedule.failures}"
        elif reasons:
            schedule.failures = 0
            schedule.idle_steps = 0
            schedule.next_pull_at = max(now, base + _interval())
            schedule.reason = ", ".join(reasons)[:200]
        else:
            schedule.failures = 0
            schedule.idle_steps += 1
            wait = idle_wait(schedule.idle_steps)
            schedule.next_pull_at = max(now, base + _jitter(wait))
            at_ceiling = wait >= settings.PULL_IDLE_CEILING_SECONDS
            schedule.reason = (
                f"idle — backing off (step {schedule.idle_steps}"
                f"{', at the ceiling' if at_ceiling else ''})"
            )
        schedule.save(
            update_fields=[
                "last_pulled_at",
                "next_pull_at",
                "reason",
                "failures",
                "idle_steps",
                "updated_at",
            ]
        )
    return schedule


def pull_schedule_pull_now(*, seller_id: int, now: datetime | None = None) -> None:
    """Pull now (staff, the seller): the pull is queued at once; the row holds the lease so
    the next beat does not queue it again."""
    now = now or timezone.now()
    lease = now + timedelta(seconds=settings.PULL_LEASE_SECONDS)
    updated = PullSchedule.objects.filter(seller_id=seller_id).update(
        next_pull_at=lease, reason=REASON_PULL_NOW, queued_at=now, updated_at=now
    )
    if not updated:
        PullSchedule.objects.create(
            seller_id=seller_id, next_pull_at=lease, reason=REASON_PULL_NOW, queued_at=now
        )


# --- the fan-out's claim --------------------------------------------------------------

_CLAIM_POSTGRES = """
UPDATE sellers_pullschedule SET next_pull_at = %s, queued_at = %s, updated_at = %s
WHERE id IN (
    SELECT id FROM sellers_pullschedule
    WHERE next_pull_at <= %s ORDER BY next_pull_at LIMIT %s
    FOR UPDATE SKIP LOCKED
)
RETURNING seller_id
"""
# SQLite (development): no row locks, and writers are serialized anyway.
_CLAIM_SQLITE = _CLAIM_POSTGRES.replace("FOR UPDATE SKIP LOCKED", "")


def pull_schedule_claim_due(
    *,
    limit: int,
    now: datetime | None = None,
    ahead_seconds: float = 0.0,
    lease_seconds: float | None = None,
) -> list[int]:
    """Claim up to ``limit`` sellers due by ``now + ahead_seconds``, oldest due first, in
    one statement: their next pull moves to a lease (rows another beat holds are skipped).
    Returns their ids.

    The fan-out looks half a beat period ahead: a pull due just after this tick goes now,
    a little early, instead of a whole period late at the next one.
    """
    now = now or timezone.now()
    due_by = now + timedelta(seconds=ahead_seconds)
    lease = now + timedelta(
        seconds=settings.PULL_LEASE_SECONDS if lease_seconds is None else lease_seconds
    )
    sql = _CLAIM_POSTGRES if db_connection.vendor == "postgresql" else _CLAIM_SQLITE
    at = db_connection.ops.adapt_datetimefield_value  # SQLite stores text, Postgres moments
    with transaction.atomic(), db_connection.cursor() as cursor:
        cursor.execute(sql, [at(lease), at(now), at(now), at(due_by), limit])
        return [row[0] for row in cursor.fetchall()]


def pull_schedule_due_count(*, now: datetime | None = None) -> int:
    """Sellers whose pull is due (the dashboard, metrics): bounded by the due, via the index."""
    now = now or timezone.now()
    return PullSchedule.objects.filter(next_pull_at__lte=now).count()
