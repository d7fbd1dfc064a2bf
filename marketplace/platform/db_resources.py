"""What the Platform API's exports and imports of a seller's database share: their paths
(``/dbs/{db_id}/<resource>/{id}…``), reading one object or a list out of an answer, and
the schedule call (``day``/``hour``/``minute`` and/or ``paused`` → ``{"cron", "paused"}``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from marketplace.platform.dates import from_platform
from marketplace.platform.errors import PlatformMalformedResponse
from marketplace.platform.transport import ApiKeyTransport

UNSET = "-1"  # in day, hour and minute: the schedule call unsets the cron


def segment(value: object) -> str:
    """One path segment, percent-quoted (``/``, ``?``, ``#`` and ``%`` included). Empty,
    ``.`` and ``..`` are refused: a client or server that normalizes the path would go
    up a level (``/accounts/../dbs`` reached ``/dbs``)."""
    text = str(value)
    if text in ("", ".", ".."):
        raise ValueError("not a path segment")
    return quote(text, safe="")


def flag(value: bool) -> str:
    return "1" if value else "0"


def schedule_paused(answer: dict[str, Any]) -> bool:
    """The schedule answer's ``paused``: the contract shows the number ``0``/``1``; another
    reading answers the string ``"0"``/``"1"`` (platform values are strings elsewhere).
    Both are taken; anything else (missing, ``true``, ``"yes"``, ``2``) is a malformed
    answer, not a guess."""
    value = answer.get("paused")
    if isinstance(value, bool):  # JSON true/false: neither reading
        raise PlatformMalformedResponse("schedule answer with a malformed paused", status=200)
    if value in (0, "0"):
        return False
    if value in (1, "1"):
        return True
    raise PlatformMalformedResponse("schedule answer with a malformed paused", status=200)


class DatabaseResourceApi:
    resource = ""  # "exports", "imports"
    singular = ""  # "export", "import": also the key of a wrapped answer

    def __init__(self, transport: ApiKeyTransport) -> None:
        self.transport = transport

    def _path(self, db_id: str, item_id: str | None = None, tail: str = "") -> str:
        path = f"/dbs/{segment(db_id)}/{self.resource}"
        if item_id is not None:
            path += f"/{segment(item_id)}"
        return path + tail

    def _one(self, data: Any) -> dict[str, Any]:
        if isinstance(data, dict) and isinstance(data.get(self.singular), dict):
            data = data[self.singular]  # tolerate a wrapped object
        if not isinstance(data, dict) or data.get("id") in (None, ""):
            raise PlatformMalformedResponse(f"{self.singular} answer without an id", status=200)
        return self._read(data)

    def _list(self, data: Any, what: str) -> list[dict[str, Any]]:
        if not isinstance(data, list):
            raise PlatformMalformedResponse(f"{what} answer is not a list", status=200)
        return [self._read(item) for item in data if isinstance(item, dict)]

    def _read(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record as the app reads it: ``last_log.time`` in RFC 3339 UTC whatever form
        the platform gave (one reading sends ``2023-01-29 00:02:53``, no zone: UTC), kept
        as given when it is no time at all (it is only shown)."""
        log = record.get("last_log")
        if isinstance(log, dict) and (moment := from_platform(log.get("time"))) is not None:
            record = {**record, "last_log": {**log, "time": moment.isoformat()}}
        return record

    def _schedule(
        self,
        db_id: str,
        item_id: str,
        *,
        day: str | None,
        hour: str | None,
        minute: str | None,
        paused: bool | None,
    ) -> dict[str, Any]:
        """Set (or with ``-1`` in all three, unset) the cron and/or pause it. The answer's
        ``paused`` is checked (``schedule_paused`` reads it)."""
        body: dict[str, str] = {}
        if day is not None:
            body.update(day=str(day), hour=str(hour), minute=str(minute))
        if paused is not None:
            body["paused"] = flag(paused)
        data = self.transport.request(
            "PUT", self._path(db_id, item_id, "/schedule"), json_body=body
        )
        if not isinstance(data, dict) or "cron" not in data:
            raise PlatformMalformedResponse("schedule answer without cron", status=200)
        schedule_paused(data)
        if body.get("day") == body.get("hour") == body.get("minute") == UNSET:
            # One reading's "unset schedule" answer still shows a cron: the request that
            # succeeded is what the platform holds, nothing scheduled.
            data = {**data, "cron": None}
        return data
