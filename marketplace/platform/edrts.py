"""The Event-Driven Sync API (EDRTS): batched, near-real-time updates of records in a
seller's platform database.

Facts from shared/spec/edrts-contract.md: its own base (``settings.PLATFORM_EDRTS_BASE_URL``,
never hard-coded), the API token in ``x-api-key`` (the transport sends it, and the Bearer
header as on the Platform API), ``PUT /db/{db_id}`` with a JSON array of records (``id``
plus the fields to set; an unknown id creates a product), 10 MB a request and 5 KB a
record (decimal, a record measured as its JSON text in UTF-8), ``GET
/db/{db_id}/{id}`` for a job's outcome (the ``details_url`` given, or built from the
correlation id; the older batch-index path is not used), ``DELETE /db/{db_id}``
with an array of ids. The platform limits the group ``edrts`` per API user, apart from the
Platform API: the transport holds its own embargo and request budget (``group="edrts"``).

A ``success`` answer means "accepted", in either of the two shapes the reference shows;
the second names no correlation id, so callers never count on polling a job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from marketplace.platform.db_resources import segment
from marketplace.platform.errors import PlatformMalformedResponse
from marketplace.platform.transport import ApiKeyTransport

GROUP = "edrts"
MAX_REQUEST_BYTES = 10_000_000
MAX_RECORD_BYTES = 5_000


def record_bytes(record: dict[str, Any]) -> int:
    """A record's size as the platform measures it: its JSON text in UTF-8 (as sent)."""
    return len(json.dumps(record, separators=(",", ":")).encode("utf-8"))


@dataclass(frozen=True)
class EdrtsBatch:
    db_id: str
    correlation_id: str
    batch_index: str


@dataclass(frozen=True)
class EdrtsAccepted:
    """What a ``success`` answer said: the batches (first shape) or the queue (second)."""

    batches: tuple[EdrtsBatch, ...] = ()
    sku_count: int | None = None
    requests_in_queue: int | None = None
    last_processed_job: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EdrtsJob:
    status: str  # queued | processed | failed
    processed_timestamp: str = ""
    records: int | None = None
    errors: tuple[dict[str, str], ...] = ()


def _int_or_none(value: Any) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def accepted_from_answer(data: Any) -> EdrtsAccepted:
    """Read a ``{"status": "success", "data": {…}}`` answer in either shape."""
    if not isinstance(data, dict) or str(data.get("status", "")).lower() != "success":
        raise PlatformMalformedResponse("EDRTS answer without status success", status=200)
    body = data.get("data")
    body = body if isinstance(body, dict) else {}
    batches = tuple(
        EdrtsBatch(
            db_id=str(item.get("db_id", "")),
            correlation_id=str(item["correlation_id"]),
            batch_index=str(item.get("batch_index", "0")),
        )
        for item in body.get("batches") or []
        if isinstance(item, dict) and item.get("correlation_id") not in (None, "")
    )
    last = body.get("last_processed_job")
    return EdrtsAccepted(
        batches=batches,
        sku_count=_int_or_none(body.get("sku_count")),
        requests_in_queue=_int_or_none(body.get("requests_in_queue")),
        last_processed_job=last if isinstance(last, dict) else {},
    )


class EdrtsClient:
    """EDRTS calls of one API user (``transport`` built with ``group="edrts"``)."""

    def __init__(self, transport: ApiKeyTransport) -> None:
        self.transport = transport

    @staticmethod
    def _path(db_id: str, *tail: str) -> str:
        return "/db/" + "/".join(segment(part) for part in (db_id, *tail))

    def turn_take(self) -> float:
        """Wait for the next call's turn in the group's budget (``transport.turn_take``);
        returns the seconds waited."""
        return self.transport.turn_take()

    def put_records(self, *, db_id: str, records: list[dict[str, Any]]) -> EdrtsAccepted:
        """Insert or update ``records`` (each with ``id``). Checked before sending: a
        record over 5 KB or a request over 10 MB raises ``ValueError`` (the platform would
        refuse the whole request)."""
        if not records:
            raise ValueError("no records to send")
        total = 2 + len(records) - 1
        for record in records:
            if record.get("id") in (None, ""):
                raise ValueError("a record without an id")
            size = record_bytes(record)
            if size > MAX_RECORD_BYTES:
                raise ValueError(f"record {record['id']!r} is {size} bytes (over 5 000)")
            total += size
        if total > MAX_REQUEST_BYTES:
            raise ValueError(f"the request is {total} bytes (over 10 000 000)")
        return accepted_from_answer(
            self.transport.request("PUT", self._path(db_id), json_body=records)
        )

    def job_path(self, *, db_id: str, correlation_id: str = "", details_url: str = "") -> str:
        """Where a job is read: the ``details_url`` the platform gave (when it is under
        our EDRTS base: the API token goes nowhere else), else the reference's two-segment
        ``/db/{db_id}/{correlation_id}``."""
        base = self.transport.base_url + "/"
        if details_url.startswith(base) and "?" not in details_url:
            return "/" + details_url[len(base) :]
        if not correlation_id:
            raise ValueError("a job is read by its details_url or its correlation id")
        return self._path(db_id, correlation_id)

    def job(self, *, db_id: str, correlation_id: str = "", details_url: str = "") -> EdrtsJob:
        """A job's outcome (``…/edrts-put``: ``details_url`` is ``…/db/{db_id}/{id}``, two
        segments after ``db``, no batch index)."""
        path = self.job_path(db_id=db_id, correlation_id=correlation_id, details_url=details_url)
        data = self.transport.request("GET", path)
        if isinstance(data, dict) and isinstance(data.get("data"), dict):
            data = data["data"]  # tolerate the answer wrapped like a success answer
        if not isinstance(data, dict) or not isinstance(data.get("status"), str):
            raise PlatformMalformedResponse("EDRTS job answer without a status", status=200)
        errors = tuple(
            {"id": str(item.get("id", "")), "message": str(item.get("message", ""))}
            for item in data.get("errors") or []
            if isinstance(item, dict)
        )
        return EdrtsJob(
            status=data["status"],
            processed_timestamp=str(data.get("processed_timestamp") or ""),
            records=_int_or_none(data.get("records")),
            errors=errors,
        )

    def delete(self, *, db_id: str, ids: list[str]) -> EdrtsAccepted:
        if not ids:
            raise ValueError("no ids to delete")
        return accepted_from_answer(
            self.transport.request("DELETE", self._path(db_id), json_body=list(ids))
        )
