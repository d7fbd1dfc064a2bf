"""An export's or import's schedule: ``day``/``hour``/``minute`` → ``cron`` ("m h * * d",
UTC), and the next run time it gives (our choice: only single values or ``*`` are
produced, so the next match is found by stepping through the next week's minutes)."""

from datetime import datetime, timedelta

from django.db import models, transaction

from sandbox import clock
from sandbox.api_php.errors import ApiError

_RANGES = {"day": (0, 6), "hour": (0, 23), "minute": (0, 59)}


def _part(body: dict, key: str) -> str:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ApiError(f"{key}: required with day, hour and minute (a number or *)")
    text = str(value).strip()
    if text == "*":
        return text
    low, high = _RANGES[key]
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
def schedule_set(*, model: type[models.Model], item_id: int, body: dict) -> dict:
    """``PUT …/schedule`` of an export or an import (``cron``, ``paused``,
    ``next_run_time``, ``updated_at`` fields); answers ``{"cron", "paused"}``."""
    sets, cron = cron_from(body)
    paused = paused_from(body)
    if not sets and paused is None:
        raise ApiError("day, hour and minute, or paused: required")
    item = model.objects.select_for_update().get(id=item_id)
    if sets:
        item.cron = cron
    if paused is not None:
        item.paused = paused
    item.next_run_time = next_run(item.cron, clock.now()) if item.cron and not item.paused else None
    item.updated_at = clock.now()
    item.save()
    # The contract shows paused as a number here: {"cron": "m h * * d", "paused": 0}.
    return {"cron": item.cron, "paused": 1 if item.paused else 0}
