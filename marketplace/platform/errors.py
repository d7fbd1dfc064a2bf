"""Errors raised by the code that speaks HTTP to the platform (token and order calls).

Callers branch on the class, never on message text:

* ``PlatformAuthError`` — 401, or an OAuth ``invalid_grant`` / ``invalid_client``:
  the credentials are wrong or the grant is gone. Not retried.
* ``PlatformRateLimited`` — 429; ``retry_after`` in seconds when the platform said.
* ``PlatformUnavailable`` — 5xx, timeouts, connection errors, an unreadable body:
  transient, retry with backoff.
* ``PlatformRejected`` — any other 4xx: the request itself is wrong. Permanent.
* ``PlatformMalformedResponse`` — 2xx whose JSON lacks what the contract promises.

``transient`` says whether retrying the same request later can succeed.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime


class PlatformError(Exception):
    """Base class; ``message`` never contains a token or a secret."""

    transient = False

    def __init__(
        self,
        message: str,
        status: int | None = None,
        code: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.retry_after = retry_after

    def __str__(self) -> str:
        parts = [self.message]
        if self.status is not None:
            parts.append(f"HTTP {self.status}")
        if self.code:
            parts.append(self.code)
        return " · ".join(parts)


class PlatformAuthError(PlatformError):
    """401, invalid_grant or invalid_client: the grant or our credentials are not accepted."""


class PlatformRateLimited(PlatformError):
    """429. ``retry_after`` (seconds) from Retry-After or X-Rate-Limit-Reset when given."""

    transient = True


class PlatformUnavailable(PlatformError):
    """5xx, timeout, connection error or an unreadable body: try again later."""

    transient = True


class PlatformRejected(PlatformError):
    """Another 4xx: the platform refuses this request as it is; retrying will not help."""


class PlatformMalformedResponse(PlatformError):
    """A 2xx answer that lacks fields the contract promises."""


# OAuth error codes that mean "this grant / these client credentials are not accepted"
# (RFC 6749 section 5.2 answers them with 400; the platform documents 401).
AUTH_ERROR_CODES = frozenset({"invalid_grant", "invalid_client", "unauthorized_client"})


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``Retry-After`` (seconds or HTTP date) and ``X-Rate-Limit-Reset``.

    When both are given, the later one wins: honouring the longer wait breaks neither.
    ``X-Rate-Limit-Reset`` is not specified further by the platform; a value larger than
    a day's worth of seconds is read as a Unix timestamp, otherwise as seconds.
    """
    now = time.time() if now is None else now
    waits: list[float] = []
    raw = (headers.get("Retry-After") or "").strip()
    if raw:
        try:
            waits.append(max(0.0, float(raw)))
        except ValueError:
            with contextlib.suppress(TypeError, ValueError):
                waits.append(max(0.0, parsedate_to_datetime(raw).timestamp() - now))
    raw = (headers.get("X-Rate-Limit-Reset") or "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            pass
        else:
            waits.append(max(0.0, value - now) if value > 86_400 else max(0.0, value))
    return max(waits) if waits else None


def error_body_message(body: str | bytes | None) -> tuple[str, str | None]:
    """(message, code) from an error body: any JSON message we can read, else the raw text.

    The returned message is bounded and meant for records a person reads; callers must not
    pass bodies that echo secrets.
    """
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    body = (body or "").strip()
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    if isinstance(data, dict):
        code = data.get("error") if isinstance(data.get("error"), str) else None
        for key in ("error_description", "message", "detail", "error"):
            value = data.get(key)
            if isinstance(value, str) and value:
                return value[:300], code
        return body[:300], code
    return body[:300], None


def platform_error_for_response(
    *, status: int, headers: Mapping[str, str], body: str | bytes | None
) -> PlatformError:
    """The exception class matching a non-2xx answer (token or order call)."""
    message, code = error_body_message(body)
    message = message or f"platform answered {status}"
    if status == 429:
        return PlatformRateLimited(
            message, status=status, code=code, retry_after=retry_after_seconds(headers)
        )
    if status >= 500:
        return PlatformUnavailable(
            message, status=status, code=code, retry_after=retry_after_seconds(headers)
        )
    if status == 401 or code in AUTH_ERROR_CODES:
        return PlatformAuthError(message, status=status, code=code)
    return PlatformRejected(message, status=status, code=code)
