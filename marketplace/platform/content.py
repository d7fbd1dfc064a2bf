"""The Content API: a seller's platform database read back, row by row (issue 34).

From the reference (developer.feedonomics.com/content.html): raw or transformed data of a
database, ``db_id`` in the path, ``limit``, ``offset``, ``direction`` and ``selector`` in
the query, the API token in ``x-api-key`` (and the Bearer header, as every Platform API
call: the transport sends both); the answer ``{"status": "success", "total_count": n,
"data": [{"id": …, field: …}, …]}``, values as the database holds them. The stored
reference shows no path: we call ``GET /dbs/{db_id}/raw_data`` under the Platform API's
base (the raw rows are what EDRTS writes; a transformer would not show our values as
sent). Its syntax of ``selector`` is not shown either: we send one reading, ``[id] equal
"X"`` clauses joined by `` OR `` (sandbox/README.md, "Content API").

Limited by the platform as its own group (``content``): the transport holds its embargo
and budget apart from the Platform API's and EDRTS's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from marketplace.platform.db_resources import segment
from marketplace.platform.errors import PlatformMalformedResponse
from marketplace.platform.transport import ApiKeyTransport

GROUP = "content"
# Ids a request names: a selector of 50 clauses stays well inside a URL's usual limits.
IDS_PER_REQUEST = 50


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ids_selector(ids: Iterable[str], *, field: str = "id") -> str:
    """The selector of the rows whose ``field`` is one of ``ids``."""
    clauses = [f"[{field}] equal {_quoted(str(value))}" for value in ids]
    if not clauses:
        raise ValueError("no ids to select")
    return " OR ".join(clauses)


def rows_from_answer(data: Any) -> tuple[int, list[dict[str, Any]]]:
    """``(total_count, rows)`` of a ``success`` answer; anything else is malformed."""
    if not isinstance(data, dict) or str(data.get("status", "")).lower() != "success":
        raise PlatformMalformedResponse("Content API answer without status success", status=200)
    rows = data.get("data")
    if not isinstance(rows, list):
        raise PlatformMalformedResponse("Content API answer without a data list", status=200)
    try:
        total = int(str(data.get("total_count", len(rows))))
    except ValueError as exc:
        raise PlatformMalformedResponse(
            "Content API answer with a malformed total_count", status=200
        ) from exc
    return total, [row for row in rows if isinstance(row, dict)]


class ContentApi:
    """Content API reads of one API user (``transport`` built with ``group="content"``)."""

    def __init__(self, transport: ApiKeyTransport) -> None:
        self.transport = transport
        self.calls = 0  # requests made (the reconciliation counts its platform calls)

    def raw_rows(
        self, *, db_id: str, selector: str = "", limit: int = 100, offset: int = 0
    ) -> tuple[int, list[dict[str, Any]]]:
        """One page of the database's raw rows: ``(total_count, rows)``."""
        params = {"limit": str(limit), "offset": str(offset)}
        if selector:
            params["selector"] = selector
        path = f"/dbs/{segment(db_id)}/raw_data"
        self.calls += 1
        return rows_from_answer(self.transport.request("GET", path, params=params))

    def rows_by_id(self, *, db_id: str, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The rows of ``ids`` (absent: not in the database), ``IDS_PER_REQUEST`` ids a
        request, each request's pages followed by ``offset`` until ``total_count``."""
        found: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), IDS_PER_REQUEST):
            selector = ids_selector(unique[start : start + IDS_PER_REQUEST])
            offset = 0
            while True:
                total, rows = self.raw_rows(
                    db_id=db_id, selector=selector, limit=IDS_PER_REQUEST, offset=offset
                )
                for row in rows:
                    found.setdefault(str(row.get("id", "")), row)
                offset += len(rows)
                if not rows or offset >= total:
                    break
        return found
