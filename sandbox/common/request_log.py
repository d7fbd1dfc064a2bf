"""A cheap request log: a bounded ring buffer plus counters by endpoint and status.

Benchmarks push thousands of requests and poll the inspection API, so nothing here grows
without bound and nothing touches the database.
"""

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode

from django.http import HttpRequest, HttpResponse

from sandbox.common import clock
from sandbox.common.api_php.keys import endpoint_key_for

RING_SIZE = 2000
_SECRET_PARAMS = {"code", "client_secret", "refresh_token", "access_token", "password"}
_UNLOGGED_PATHS = {"/health", "/sandbox/api/state", "/sandbox/api/requests", "/favicon.ico"}

_lock = threading.Lock()
_ring: deque[dict] = deque(maxlen=RING_SIZE)
_counts: dict[str, dict[str, int]] = {}
_sequence = 0


def endpoint_key(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    name = match.url_name if match else None
    if name == "order":
        return "put_order" if request.method == "PUT" else "get_order"
    if name == "return":
        return "put_return" if request.method == "PUT" else "get_return"
    platform_key = endpoint_key_for(name, request.method)
    if platform_key is not None:
        return platform_key
    return name or "other"


def _redacted_query(query: str) -> str:
    if not query:
        return ""
    pairs = parse_qsl(query, keep_blank_values=True)
    return urlencode([(k, "***" if k in _SECRET_PARAMS else v) for k, v in pairs])


def _authorization_kind(request: HttpRequest) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION")
    if not header:
        return None
    return header.split(" ", 1)[0] + " ***"


def record(request: HttpRequest, response: HttpResponse, started: float) -> None:
    global _sequence
    key = getattr(request, "sandbox_endpoint", None) or endpoint_key(request)
    status = str(response.status_code)
    entry = {
        "request_id": getattr(request, "sandbox_request_id", ""),
        "method": request.method,
        "path": request.path,
        "query": _redacted_query(request.META.get("QUERY_STRING", "")),
        "endpoint": key,
        "status": response.status_code,
        "ms": round((time.monotonic() - started) * 1000, 2),
        "at": datetime.now(UTC).isoformat(),
        "sandbox_at": clock.now().isoformat(),
        "fault": getattr(request, "sandbox_fault", None),
        "authorization": _authorization_kind(request),
    }
    with _lock:
        _sequence += 1
        entry["seq"] = _sequence
        _ring.append(entry)
        by_status = _counts.setdefault(key, {})
        by_status[status] = by_status.get(status, 0) + 1


def entries(
    *, since_seq: int = 0, limit: int = 200, endpoint: str | None = None, path: str | None = None
) -> list[dict]:
    with _lock:
        items = list(_ring)
    selected = [
        e
        for e in items
        if e["seq"] > since_seq
        and (endpoint is None or e["endpoint"] == endpoint)
        and (path is None or path in e["path"])
    ]
    return selected[-limit:]


def counts() -> dict:
    with _lock:
        by_endpoint = {k: dict(v) for k, v in _counts.items()}
        total = _sequence
    return {"total_logged": total, "by_endpoint": by_endpoint}


def reset() -> None:
    global _sequence
    with _lock:
        _ring.clear()
        _counts.clear()
        _sequence = 0


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.monotonic()
        request_id = uuid.uuid4().hex
        # Read after this by the views, violations and the log (getattr: no typed place).
        request.sandbox_request_id = request_id  # type: ignore[attr-defined]
        response = self.get_response(request)
        response["X-Request-Id"] = request_id
        if request.path not in _UNLOGGED_PATHS and not (
            request.path.startswith("/sandbox/") and request.method == "GET"
        ):
            record(request, response, started)
        return response
