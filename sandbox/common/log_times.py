"""The time of a run's log (an export's or an import's ``last_log.time``).

Reading A (the interface document): RFC 3339 with its offset. Reading B of
``export_log_time`` (the reference's example): ``2023-01-29 00:02:53``, UTC without a
zone, which a client must read as UTC and never fail on.
"""

from datetime import UTC, datetime

from sandbox.common import switches


def log_time(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    utc = moment.astimezone(UTC)
    if switches.reading_b("export_log_time"):
        return utc.strftime("%Y-%m-%d %H:%M:%S")
    return utc.isoformat(timespec="seconds")
