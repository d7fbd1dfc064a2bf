"""Fault injection on the platform endpoints (/api/v1), set per test through the control API.

A rule names an endpoint key (``put_order``, ``get_order``, ``list_orders``,
``fulfillments``, ``errors``, ``access_token``, ``authorize`` or ``*`` = every /api/v1
endpoint except ``authorize``) and a kind. It fires deterministically (``count``: the
next N matching calls, after ``skip`` calls let through), with a ``probability``
(seeded by ``seed``), or, with neither, on every matching call until cleared.
``latency`` adds delay and lets the call proceed; every other kind answers instead of
the view, or, with ``after_view``, after the view ran and committed (the response lost).
A 429 or 503 always says how long to wait (``Retry-After``, ``retry_after`` seconds,
default 1; a 429 also ``X-Rate-Limit-Remaining: 0`` and ``X-Rate-Limit-Reset``) unless the
rule drops it (``send_retry_after: false``); ``retry_watch`` holds clients to it.
"""

import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse, JsonResponse

from sandbox.common.api_php import keys as platform_keys
from sandbox.common.api_php.fault_shapes import platform_shaped
from sandbox.common.request_log import endpoint_key

N = TypeVar("N", int, float)

KINDS = {
    "rate_limit",
    "server_error",
    "bad_gateway",
    "unavailable",
    "latency",
    "hang",
    "malformed_json",
}
ALIASES = {"429": "rate_limit", "500": "server_error", "502": "bad_gateway", "503": "unavailable"}
ENDPOINTS = {
    "authorize",
    "access_token",
    "put_order",
    "get_order",
    "list_orders",
    "fulfillments",
    "errors",
    # Returns and seller refunds.
    "put_return",
    "get_return",
    "list_returns",
    "order_returns",
    "return_refunds",
    "return_complete",
    "return_errors",
    "list_refunds",
    "order_refunds",
    "get_refund",
    "refund_complete",
    "refund_errors",
}


@dataclass
class FaultRule:
    id: int
    endpoint: str
    kind: str
    count: int | None = None
    skip: int = 0
    probability: float | None = None
    seed: int | None = None
    retry_after: int = 1
    reset_format: str = "epoch"
    send_retry_after: bool = True
    latency_ms: int = 0
    hang_seconds: float = 5.0
    after_view: bool = False
    seen: int = 0
    fired: int = 0
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def public(self) -> dict:
        data = asdict(self)
        data.pop("rng")
        data["remaining"] = self.count
        return data


class FaultSpecError(ValueError):
    pass


_lock = threading.Lock()
_rules: list[FaultRule] = []
_next_id = 1


def _optional_number(
    spec: dict[str, Any], key: str, kind: type[N], default: N | None, minimum: float = 0
) -> N | None:
    value = spec.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FaultSpecError(f"{key} must be a number")
    if value < minimum:
        raise FaultSpecError(f"{key} must be >= {minimum}")
    return kind(value)


def _number(spec: dict[str, Any], key: str, kind: type[N], default: N) -> N:
    """As ``_optional_number``; a null is the default."""
    value = _optional_number(spec, key, kind, default)
    return default if value is None else value


def rule_add(spec: dict) -> FaultRule:
    global _next_id
    kind = ALIASES.get(str(spec.get("kind", "")), spec.get("kind"))
    if kind not in KINDS:
        raise FaultSpecError(f"kind must be one of {sorted(KINDS | set(ALIASES))}")
    endpoint = spec.get("endpoint", "*")
    known = ENDPOINTS | platform_keys.ENDPOINTS | {platform_keys.WILDCARD}
    if endpoint != "*" and endpoint not in known:
        raise FaultSpecError(f"endpoint must be '*' or one of {sorted(known)}")
    probability = _optional_number(spec, "probability", float, None)
    if probability is not None and probability > 1:
        raise FaultSpecError("probability must be between 0 and 1")
    reset_format = spec.get("reset_format", "epoch")
    if reset_format not in ("epoch", "seconds"):
        raise FaultSpecError("reset_format must be epoch or seconds")
    seed = spec.get("seed")
    with _lock:
        rule = FaultRule(
            id=_next_id,
            endpoint=endpoint,
            kind=kind,
            count=_optional_number(spec, "count", int, None, 1),
            skip=_number(spec, "skip", int, 0),
            probability=probability,
            seed=seed,
            retry_after=_number(spec, "retry_after", int, 1),
            reset_format=reset_format,
            send_retry_after=bool(spec.get("send_retry_after", True)),
            latency_ms=_number(spec, "latency_ms", int, 0),
            hang_seconds=_number(spec, "hang_seconds", float, 5.0),
            after_view=bool(spec.get("after_view", False)),
            rng=random.Random(seed),
        )
        _next_id += 1
        _rules.append(rule)
    return rule


def rules() -> list[dict]:
    with _lock:
        return [r.public() for r in _rules]


def reset() -> None:
    with _lock:
        _rules.clear()


def _matches(rule: FaultRule, key: str) -> bool:
    if rule.endpoint == "*":
        # The order API's endpoints; /api.php has its own wildcard (``platform``).
        return key != "authorize" and key not in platform_keys.ENDPOINTS
    if rule.endpoint == platform_keys.WILDCARD:
        return key in platform_keys.ENDPOINTS
    return rule.endpoint == key


def _select(key: str) -> tuple[int, FaultRule | None]:
    """Consume the rules for one call: total latency to add, and the terminal rule if any."""
    latency_ms = 0
    with _lock:
        for rule in _rules:
            if not _matches(rule, key) or (rule.count is not None and rule.count <= 0):
                continue
            rule.seen += 1
            if rule.skip > 0:
                rule.skip -= 1
                continue
            if rule.probability is not None and rule.rng.random() >= rule.probability:
                continue
            if rule.count is not None:
                rule.count -= 1
            rule.fired += 1
            if rule.kind == "latency":
                latency_ms += rule.latency_ms
                continue
            return latency_ms, rule
    return latency_ms, None


def fault_response(rule: FaultRule) -> HttpResponse:
    if rule.kind == "rate_limit":
        response = JsonResponse(
            {"error": "rate_limited", "message": "Too many requests (sandbox fault)"}, status=429
        )
        if rule.send_retry_after:
            response["Retry-After"] = str(rule.retry_after)
        response["X-Rate-Limit-Remaining"] = "0"
        reset_at = rule.retry_after
        if rule.reset_format == "epoch":
            # Rounded up: a client waiting for the reset never comes back before Retry-After.
            reset_at = math.ceil(time.time() + rule.retry_after)
        response["X-Rate-Limit-Reset"] = str(reset_at)
        return response
    if rule.kind == "server_error":
        return JsonResponse(
            {"error": "internal_error", "message": "Internal server error (sandbox fault)"},
            status=500,
        )
    if rule.kind == "bad_gateway":
        # Deliberately not JSON: clients must fall back to the raw text.
        return HttpResponse("<html><body>502 Bad Gateway</body></html>", status=502)
    if rule.kind == "unavailable":
        response = JsonResponse(
            {"error": "unavailable", "message": "Service unavailable (sandbox fault)"}, status=503
        )
        if rule.send_retry_after:
            response["Retry-After"] = str(rule.retry_after)
        return response
    if rule.kind == "malformed_json":
        return HttpResponse(
            b'{"orders": [{"mp_order_number": "TRUNCATED', content_type="application/json"
        )
    # hang (when answering instead of the view): the client gave up long ago.
    return HttpResponse("504 Gateway Timeout", status=504)


def _answer(request: HttpRequest, rule: FaultRule) -> HttpResponse:
    response = fault_response(rule)
    if request.path.startswith(platform_keys.PATH_PREFIX):
        key = getattr(request, "sandbox_endpoint", "")
        return platform_shaped(response, kind=rule.kind, endpoint=key, wait=rule.retry_after)
    return response


class FaultMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        after: FaultRule | None = getattr(request, "sandbox_after_fault", None)
        if after is None:
            return response
        if after.kind == "hang":
            time.sleep(after.hang_seconds)
            return response
        return _answer(request, after)

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: tuple, view_kwargs: dict
    ) -> HttpResponse | None:
        if not request.path.startswith(("/api/v1/", platform_keys.PATH_PREFIX)):
            return None
        key = endpoint_key(request)
        request.sandbox_endpoint = key  # type: ignore[attr-defined]
        if not _rules:
            return None
        latency_ms, rule = _select(key)
        if latency_ms:
            time.sleep(latency_ms / 1000)
            request.sandbox_fault = "latency"  # type: ignore[attr-defined]
        if rule is None:
            return None
        request.sandbox_fault = rule.kind  # type: ignore[attr-defined]
        if rule.after_view:
            request.sandbox_after_fault = rule  # type: ignore[attr-defined]
            return None
        if rule.kind == "hang":
            time.sleep(rule.hang_seconds)
        return _answer(request, rule)
