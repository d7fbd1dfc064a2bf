"""``to_wire``: every date-time the app sends is UTC, ``Z``, whole seconds."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from marketplace.platform.dates import to_wire

WIRE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def test_utc_with_z_and_no_fraction() -> None:
    assert to_wire(datetime(2024, 5, 10, 14, 3, tzinfo=UTC)) == "2024-05-10T14:03:00Z"
    with_micro = datetime(2024, 5, 10, 14, 3, 7, 999_999, tzinfo=UTC)
    # Truncated, never rounded up: a filter must not move past the moment it names.
    assert to_wire(with_micro) == "2024-05-10T14:03:07Z"


def test_other_offsets_are_converted_to_utc() -> None:
    plus_two = datetime(2024, 5, 10, 16, 3, tzinfo=timezone(timedelta(hours=2)))
    assert to_wire(plus_two) == "2024-05-10T14:03:00Z"
    new_york = datetime(2024, 1, 10, 9, 0, tzinfo=ZoneInfo("America/New_York"))
    assert to_wire(new_york) == "2024-01-10T14:00:00Z"
    assert WIRE.fullmatch(to_wire(datetime.now(UTC)))


def test_a_naive_datetime_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        to_wire(datetime(2024, 5, 10, 14, 3))
