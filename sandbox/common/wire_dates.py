"""Date-times a client sends to the order interface: exactly ``YYYY-MM-DDTHH:MM:SSZ``.

The Order Source reference asks for "ISO 8601 date-time YYYY-MM-DDTH:i:sZ (all times must
be in UTC)" for ``purchase_date`` and the windows; its listing filters are ISO 8601 and
read a time without a zone in America/New_York. Under the default reading of the
``date_format`` point (A) anything else is refused (400 naming the field); under B any RFC
3339 date-time is taken (and, for the listing filters, a zone-less ISO 8601 time in
America/New_York). Under both, a value not in exactly that form is counted as a violation
(``date_format``) by the caller, who knows the request: the client should send the
stricter form whatever a lenient platform forgives.
"""

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from sandbox.common import switches

WIRE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$")
_ZONE_LESS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?$")
# The listing filters' "default time zone" (reference, …/orders/get-orders).
NEW_YORK = ZoneInfo("America/New_York")
EXPECTED = "must be a UTC date-time as YYYY-MM-DDTHH:MM:SSZ (e.g. 2024-05-10T14:03:00Z)"


@dataclass(frozen=True)
class SentDate:
    """What a sent date-time value means: ``moment`` (None when refused), ``problem`` (the
    400's reason for the field, or None) and ``exact`` (sent in exactly the wire form)."""

    moment: datetime | None
    problem: str | None
    exact: bool


def _fromiso(text: str) -> datetime | None:
    text = text[:-1] + "+00:00" if text[-1:] in "Zz" else text
    text = re.sub(r"\.(\d{6})\d+", r".\1", text)  # Python takes at most microseconds
    try:
        return datetime.fromisoformat(text.replace("t", "T"))
    except ValueError:
        return None


def sent_datetime(value: Any, *, zone_less: ZoneInfo | None = None) -> SentDate:
    """Read a date-time a client sent. ``zone_less``: the zone a time without one is read
    in (the listing filters: America/New_York), under the lenient reading only."""
    if isinstance(value, str) and WIRE.match(value):
        moment = _fromiso(value)
        if moment is not None:
            return SentDate(moment, None, True)
    if not switches.reading_b("date_format"):
        return SentDate(None, EXPECTED, False)
    moment = None
    if isinstance(value, str) and _RFC3339.match(value):
        moment = _fromiso(value)
    elif isinstance(value, str) and zone_less is not None and _ZONE_LESS.match(value):
        naive = _fromiso(value)
        moment = naive.replace(tzinfo=zone_less) if naive is not None else None
    if moment is None:
        return SentDate(None, "must be an RFC 3339 date-time", False)
    return SentDate(moment.astimezone(UTC), None, False)
