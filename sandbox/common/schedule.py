"""An export's or import's schedule: ``day``/``hour``/``minute`` → ``cron`` ("m h * * d",
UTC), and the next run time it gives (our choice: only single values or ``*`` are
produced, so the next match is found by stepping through the next week's minutes), and
``due_start``, which starts the scheduled rows whose time has come (the Platform API's
ticker loop calls it for exports and imports)."""

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db import models, transaction

from sandbox.common import clock, switches
from sandbox.common.api_php.errors import ApiError

log = logging.getLogger(__name__)

_RANGES = {"day": (0, 6), "hour": (0, 23), "minute": (0, 59)}


class Scheduled(models.Model):
    """A row that runs on its schedule (an export, an import): the columns this module
    reads and sets."""

    cron = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 - null = unset
    paused = models.BooleanField(default=False)
    next_run_time = models.DateTimeField(null=True, blank=True, db_index=True)
    updated_at = models.DateTimeField()

    class Meta:
        abstract = True


def _part(body: dict, key: str) -> str:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ApiError(f"{key}: required with day, hour and minute (a number or *)")
    text = str(value).strip()
    low, high = _RANGES[key]
    if text == "*":
        if key == "hour" and switches.reading_b("schedule_hour"):
            raise ApiError(f"hour: must be a number from {low} to {high}")
        return text
    if not text.lstrip("-").isdigit() or not low <= int(text) <= high:
        raise ApiError(f"{key}: must be * or a number from {low} to {high}")
    return str(int(text))


def cron_from(body: dict) -> tuple[bool, str | None]:
    """(whether the body sets the schedule, the cron or None when it unsets it)."""
    given = [k for k in ("day", "hour", "minute") if k in body]
    if not given:
        return False, None
    if all(str(body.get(k, "")).strip() == "-1" for k in ("day", "hour", "minute")):
        return True, None
    day, hour, minute = (_part(body, k) for k in ("day", "hour", "minute"))
    return True, f"{minute} {hour} * * {day}"


def paused_from(body: dict) -> bool | None:
    if "paused" not in body:
        return None
    value = body["paused"]
    if value in (0, 1, "0", "1") and not isinstance(value, bool):
        return str(value) == "1"
    if isinstance(value, bool):
        return value
    raise ApiError("paused: must be 0 or 1")


def next_run(cron: str, after: datetime) -> datetime:
    minute, hour, _, _, day = cron.split()
    moment = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(7 * 24 * 60 + 1):
        weekday = (moment.weekday() + 1) % 7  # cron: Sunday 0
        if (
            (minute == "*" or int(minute) == moment.minute)
            and (hour == "*" or int(hour) == moment.hour)
            and (day == "*" or int(day) == weekday)
        ):
            return moment
        moment += timedelta(minutes=1)
    raise ValueError(f"cron {cron!r} never matches")


@transaction.atomic
def schedule_set(*, model: type[Scheduled], item_id: int, body: dict) -> dict:
    """``PUT …/schedule`` of an export or an import (``cron``, ``paused``,
    ``next_run_time``, ``updated_at`` fields); answers ``{"cron", "paused"}``."""
    sets, cron = cron_from(body)
    paused = paused_from(body)
    if not sets and paused is None:
        raise ApiError("day, hour and minute, or paused: required")
    item = model._default_manager.select_for_update().get(pk=item_id)
    had = item.cron
    if sets:
        item.cron = cron
    if paused is not None:
        item.paused = paused
    item.next_run_time = next_run(item.cron, clock.now()) if item.cron and not item.paused else None
    item.updated_at = clock.now()
    item.save()
    # The contract shows paused as a number here: {"cron": "m h * * d", "paused": 0};
    # reading B of the point answers it as a string, as nearly every other value.
    paused_value: int | str = 1 if item.paused else 0
    if switches.reading_b("schedule_paused"):
        paused_value = str(paused_value)
    answered = item.cron
    if sets and cron is None and switches.reading_b("unset_schedule_cron"):
        # The reference's "unset schedule" example still shows a cron: the one it had (or
        # a daily one). The schedule is unset all the same (nothing runs).
        answered = had or "0 0 * * *"
    return {"cron": answered, "paused": paused_value}


def due_start(model: type[Scheduled], start: Callable[[Any], None]) -> int:
    """Start the due runs of ``model``'s scheduled rows with ``start``; how many started.

    ``start`` raises ``ApiError`` when the row's previous run is still going."""
    now = clock.now()
    started = 0
    for row in model._default_manager.filter(
        cron__isnull=False, paused=False, next_run_time__lte=now
    ).order_by("next_run_time"):
        assert row.cron is not None  # the filter's
        # Claim the slot first: a slow run never makes the ticker start it twice.
        moved = model._default_manager.filter(pk=row.pk, next_run_time=row.next_run_time).update(
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
