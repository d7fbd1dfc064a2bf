"""The Platform API's exports of a seller's database (``/dbs/{db_id}/exports…``).

Facts from shared/spec/platform-api-contract.md and the pinned decisions of issue 12:
add is ``POST``, one is ``GET``, update ``PUT`` (free-form, answers the whole Export with
string values, password included), delete ``DELETE`` → ``{}``, schedule ``PUT …/schedule``
(``day``/``hour``/``minute`` and/or ``paused``) → ``{"cron", "paused"}``, run ``POST …/run``
→ 202, the outcome later in the export's ``status`` and ``last_log``.

Answers may carry fields we do not know (additive changes); we read only what we need.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from marketplace.platform.errors import PlatformMalformedResponse
from marketplace.platform.transport import ApiKeyTransport


def _seg(value: str | int) -> str:
    return quote(str(value), safe="")


class ExportsApi:
    def __init__(self, transport: ApiKeyTransport) -> None:
        self.transport = transport

    def _path(self, db_id: str, export_id: str | None = None, tail: str = "") -> str:
        path = f"/dbs/{_seg(db_id)}/exports"
        if export_id is not None:
            path += f"/{_seg(export_id)}"
        return path + tail

    @staticmethod
    def _export(data: Any) -> dict[str, Any]:
        if isinstance(data, dict) and isinstance(data.get("export"), dict):
            data = data["export"]  # tolerate a wrapped object
        if not isinstance(data, dict) or data.get("id") in (None, ""):
            raise PlatformMalformedResponse("export answer without an id", status=200)
        return data

    def list(self, *, db_id: str) -> list[dict[str, Any]]:
        data = self.transport.request("GET", self._path(db_id))
        if not isinstance(data, list):
            raise PlatformMalformedResponse("exports answer is not a list", status=200)
        return [item for item in data if isinstance(item, dict)]

    def add(self, *, db_id: str, export: dict[str, Any]) -> dict[str, Any]:
        return self._export(self.transport.request("POST", self._path(db_id), json_body=export))

    def get(self, *, db_id: str, export_id: str) -> dict[str, Any]:
        return self._export(self.transport.request("GET", self._path(db_id, export_id)))

    def update(self, *, db_id: str, export_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        return self._export(
            self.transport.request("PUT", self._path(db_id, export_id), json_body=changes)
        )

    def delete(self, *, db_id: str, export_id: str) -> None:
        self.transport.request("DELETE", self._path(db_id, export_id))

    def schedule(
        self,
        *,
        db_id: str,
        export_id: str,
        day: str | None = None,
        hour: str | None = None,
        minute: str | None = None,
        paused: bool | None = None,
    ) -> dict[str, Any]:
        """Set (or with ``-1`` in all three, unset) the cron and/or pause it."""
        body: dict[str, str] = {}
        if day is not None:
            body.update(day=str(day), hour=str(hour), minute=str(minute))
        if paused is not None:
            body["paused"] = "1" if paused else "0"
        data = self.transport.request(
            "PUT", self._path(db_id, export_id, "/schedule"), json_body=body
        )
        if not isinstance(data, dict) or "cron" not in data:
            raise PlatformMalformedResponse("schedule answer without cron", status=200)
        return data

    def run(self, *, db_id: str, export_id: str) -> str:
        """Start a run (it happens in the background). Returns the platform's message."""
        data = self.transport.request("POST", self._path(db_id, export_id, "/run"))
        message = data.get("message") if isinstance(data, dict) else None
        return message if isinstance(message, str) else "Run started."
