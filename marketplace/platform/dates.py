"""Date-times as the platform is sent them: one form, everywhere.

The Order Source reference (``…/orders/create-orders``) asks for "ISO 8601 date-time
YYYY-MM-DDTH:i:sZ (all times must be in UTC)", and its listing filters read a time
without a zone in America/New_York. RFC 3339 allows ``+00:00`` and fractions, but a strict
platform refuses them (TRAPS.md: 243 violations in one run). So every date-time the app
sends (order dates, ship and delivery windows, ``seller_updated_after``,
``imported_after``, ``created_after``/``created_before`` …) goes through ``to_wire``:
UTC, ``Z``, whole seconds. Dates the app *reads* may carry any offset (``parse_datetime``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

WIRE_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def to_wire(value: datetime) -> str:
    """``value`` in UTC as ``2024-05-10T14:03:00Z``: fractions are dropped (truncated, so
    a filter never moves past the moment it names), other offsets converted.

    A naive datetime raises ``ValueError``: the app's times are aware (``USE_TZ``), and
    guessing a zone for one that is not would send a wrong time without a word."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"a naive datetime cannot be sent to the platform: {value!r}")
    return value.astimezone(UTC).strftime(WIRE_FORMAT)


def from_platform(value: Any) -> datetime | None:
    """A date-time the platform answered, in UTC: RFC 3339 with any offset, or a time
    without a zone (the reference's log example ``2023-01-29 00:02:53``), read as UTC.
    None for anything else: a time the app only shows must never fail a call."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
