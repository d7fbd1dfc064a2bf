"""Date-times of the v2 API: RFC 3339 with an offset and no fractional seconds, both ways."""

import re
from datetime import UTC, date, datetime

_STRICT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$")


def strict_datetime(value: object) -> datetime | None:
    """``2024-04-20T10:15:00+02:00`` or ``…Z``; None for anything else (a fraction, no offset)."""
    if not isinstance(value, str) or not _STRICT.match(value):
        return None
    try:
        return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return None


def rfc3339(moment: datetime) -> str:
    """UTC, whole seconds: what every v2 answer says."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat()


def local_date(value: str) -> date:
    """The calendar date a shipment date-time names, in its own offset (the marketplace-facing
    interface shows a date only)."""
    parsed = strict_datetime(value)
    if parsed is None:
        return date.fromisoformat(value[:10])
    return parsed.date()
