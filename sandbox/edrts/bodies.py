"""Reading an EDRTS request body: the 10 MB request limit (413) before anything is read,
then the JSON array, each record's 5 KB limit (400 naming the record, nothing applied) and
its fields. Decimal units, a record measured as its compact JSON text in UTF-8 (our choice;
the contract says "10 MB a request, 5 KB a record")."""

import json
import re

from django.http import HttpRequest

from sandbox.common import violations
from sandbox.common.api_php.errors import ApiError
from sandbox.edrts import state
from sandbox.records.api_users.models import PlatformUser

MAX_REQUEST_BYTES = 10_000_000
MAX_RECORD_BYTES = 5_000
FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _read(request: HttpRequest) -> bytes:
    raw_length = request.META.get("CONTENT_LENGTH") or "0"
    length = int(raw_length) if raw_length.isdigit() else 0
    if length > MAX_REQUEST_BYTES:
        raise ApiError(
            f"Request body of {length} bytes is over the limit of {MAX_REQUEST_BYTES} bytes "
            "a request",
            413,
        )
    # Not ``request.body``: Django caps that at DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB).
    body = request.read(MAX_REQUEST_BYTES + 1)
    if len(body) > MAX_REQUEST_BYTES:
        raise ApiError(
            f"Request body is over the limit of {MAX_REQUEST_BYTES} bytes a request", 413
        )
    state.count(bytes_received=len(body))
    return body


def _array(request: HttpRequest) -> list:
    body = _read(request)
    if not body.strip():
        raise ApiError("The body must be a JSON array", 400)
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(f"The body is not valid JSON: {exc}", 400) from exc
    if not isinstance(data, list):
        raise ApiError("The body must be a JSON array", 400)
    if not data:
        raise ApiError("The body holds no records", 400)
    return data


def _id(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value)
    return text if text.strip() else None


def _record_size(record: object) -> int:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8"))


def records_read(request: HttpRequest, *, user: PlatformUser) -> list[dict[str, str]]:
    """The request's records as ``{"id", field: value}`` (values as strings; ``""``
    clears). Any bad record refuses the whole request."""
    data = _array(request)
    state.count(records_received=len(data))
    oversize = [(i, r) for i, r in enumerate(data) if _record_size(r) > MAX_RECORD_BYTES]
    for i, record in oversize:
        key = _id(record.get("id")) if isinstance(record, dict) else None
        violations.violation_record(
            kind=violations.EDRTS_RECORD_OVER_5KB,
            seller=user.username,
            client_id=f"api-user:{user.username}",
            request_id=getattr(request, "sandbox_request_id", ""),
            detail=(
                f"{request.method} {request.path}: record {i} (id {key!r}) is "
                f"{_record_size(record)} bytes"
            ),
        )
    if oversize:
        state.count(records_over_5kb=len(oversize))
        i, record = oversize[0]
        key = _id(record.get("id")) if isinstance(record, dict) else None
        raise ApiError(
            f"Record {i} (id {key!r}) is {_record_size(record)} bytes as JSON text, over the "
            f"limit of {MAX_RECORD_BYTES} bytes a record; nothing was applied",
            400,
        )
    records = []
    for i, record in enumerate(data):
        if not isinstance(record, dict):
            raise ApiError(f"Record {i}: must be a JSON object", 400)
        key = _id(record.get("id"))
        if key is None:
            raise ApiError(f"Record {i}: id is required (a non-empty string)", 400)
        clean = {"id": key}
        for field, value in record.items():
            if field == "id":
                continue
            if not FIELD_NAME.match(field):
                raise ApiError(f"Record {i} (id {key!r}): {field!r} is not a field name", 400)
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise ApiError(
                    f'Record {i} (id {key!r}): {field} must be a string ("" clears it)', 400
                )
            clean[field] = str(value)
        records.append(clean)
    return records


def ids_read(request: HttpRequest) -> list[str]:
    """A ``DELETE`` body: an array of ids (strings or numbers; ``{"id"}`` objects too)."""
    data = _array(request)
    state.count(records_received=len(data))
    ids = []
    for i, item in enumerate(data):
        key = _id(item.get("id")) if isinstance(item, dict) else _id(item)
        if key is None:
            raise ApiError(f"Id {i}: must be a non-empty string", 400)
        ids.append(key)
    return ids
