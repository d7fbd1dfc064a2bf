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
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

from marketplace.log_redaction import REDACTED, redact
from marketplace.platform.error_bodies import error_body_parts


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


class PlatformNoAnswer(PlatformUnavailable):
    """No answer came (a timeout, a connection error): the platform may have carried the
    request out or not. A call that must not be lost (a token refresh that rotates the
    refresh token) is asked again at once."""


class PlatformRejected(PlatformError):
    """Another 4xx: the platform refuses this request as it is; retrying will not help."""


class PlatformMalformedResponse(PlatformError):
    """A 2xx answer that lacks fields the contract promises."""


# OAuth error codes that mean "this grant / these client credentials are not accepted"
# (RFC 6749 section 5.2 answers them with 400; the platform documents 401).
AUTH_ERROR_CODES = frozenset({"invalid_grant", "invalid_client", "unauthorized_client"})
# An error code is a word (``invalid_grant``); anything else is not kept as one.


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


# A long opaque run of token characters with letters and digits: an API token, an access
# or refresh token, a code. Platform messages are words; nothing of theirs looks like this.
_TOKEN_SHAPED = re.compile(r"(?<![\w\-+/=.~])[\w\-+/=.~]{20,}")
MESSAGE_CHARS = 300


def _token_shaped(match: re.Match[str]) -> str:
    text = match.group(0)
    if any(c.isdigit() for c in text) and any(c.isalpha() for c in text):
        return REDACTED
    return text


def platform_text(value: str, *, chars: int = MESSAGE_CHARS) -> str:
    """A message the platform's documents define (a JSON ``message`` or ``error``), fit to
    show a person: bounded, with anything token-like replaced."""
    return _TOKEN_SHAPED.sub(_token_shaped, redact(value[:chars]))


def answer_description(*, status: int, body: str | bytes | None, content_type: str = "") -> str:
    """What an answer was, without a word of it: its status, size and declared type."""
    size = len(body.encode() if isinstance(body, str) else body or b"")
    kind = (content_type or "").split(";")[0].strip() or "no content type"
    if not size:
        return f"the platform answered {status} with an empty body"
    return f"the platform answered {status} with {size} bytes that are not JSON ({kind})"


def error_body_message(
    body: str | bytes | None, *, status: int, content_type: str = ""
) -> tuple[str, str | None]:
    """(message, code) from an error answer, fit for records a person reads.

    Only what the documents define is taken from the body: the messages and codes of any
    JSON error shape the platform uses (``error_bodies``), scrubbed of anything
    token-like. Any other body (an HTML page, a PHP notice, JSON without those fields) is
    described by status, size and type, never quoted: it may echo what we sent, secrets
    included.
    """
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body or ""
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        return answer_description(status=status, body=body, content_type=content_type), None
    if data is None:
        return answer_description(status=status, body=body, content_type=content_type), None
    messages, code = error_body_parts(data)
    if messages:
        return platform_text("; ".join(messages)), code
    size = len(text.encode())
    kind = (content_type or "").split(";")[0].strip() or "no content type"
    return f"the platform answered {status} without a message ({size} bytes of JSON, {kind})", code


def platform_error_for_response(
    *, status: int, headers: Mapping[str, str], body: str | bytes | None
) -> PlatformError:
    """The exception class matching a non-2xx answer (token or order call)."""
    message, code = error_body_message(
        body, status=status, content_type=headers.get("Content-Type") or ""
    )
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
