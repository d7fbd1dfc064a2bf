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

from marketplace.platform.db_resources import DatabaseResourceApi
from marketplace.platform.errors import platform_text


class ExportsApi(DatabaseResourceApi):
    resource = "exports"
    singular = "export"

    def list(self, *, db_id: str) -> list[dict[str, Any]]:
        return self._list(self.transport.request("GET", self._path(db_id)), "exports")

    def add(self, *, db_id: str, export: dict[str, Any]) -> dict[str, Any]:
        return self._one(self.transport.request("POST", self._path(db_id), json_body=export))

    def get(self, *, db_id: str, export_id: str) -> dict[str, Any]:
        return self._one(self.transport.request("GET", self._path(db_id, export_id)))

    def update(self, *, db_id: str, export_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        return self._one(
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
        return self._schedule(db_id, export_id, day=day, hour=hour, minute=minute, paused=paused)

    def run(self, *, db_id: str, export_id: str) -> str:
        """Start a run (it happens in the background). Returns the platform's message."""
        data = self.transport.request("POST", self._path(db_id, export_id, "/run"))
        message = data.get("message") if isinstance(data, dict) else None
        return platform_text(message) if isinstance(message, str) else "Run started."
