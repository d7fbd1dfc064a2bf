"""marketplace.platform.errors: the platform's words (wait times, messages) read from its
answers, and never an echo of an answer we cannot read."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from marketplace.platform.errors import (
    PlatformAuthError,
    PlatformRejected,
    PlatformUnavailable,
    platform_error_for_response,
    platform_text,
    retry_after_seconds,
)

TOKEN = "a81f0c2e9d4b47f6b2c1e8d9f0a3b5c7"


def test_retry_after_in_seconds_or_http_date_or_rate_limit_reset() -> None:
    now = time.time()
    assert retry_after_seconds({"Retry-After": "7"}, now=now) == 7
    http_date = format_datetime(datetime.fromtimestamp(now, UTC) + timedelta(seconds=30), True)
    assert 28 <= retry_after_seconds({"Retry-After": http_date}, now=now) <= 31
    assert retry_after_seconds(
        {"X-Rate-Limit-Reset": str(int(now) + 12)}, now=now
    ) == pytest.approx(12, abs=1)
    assert retry_after_seconds({"X-Rate-Limit-Reset": "5"}, now=now) == 5
    assert retry_after_seconds({}, now=now) is None
    assert retry_after_seconds({"Retry-After": "soon"}, now=now) is None


def test_an_error_page_is_described_by_status_size_and_type_never_quoted() -> None:
    body = f"<html><body>Fatal error in api.php: token={TOKEN} x-api-key {TOKEN}</body></html>"
    error = platform_error_for_response(
        status=502, headers={"Content-Type": "text/html; charset=UTF-8"}, body=body
    )
    assert isinstance(error, PlatformUnavailable)
    assert str(error) == (
        f"the platform answered 502 with {len(body)} bytes that are not JSON (text/html) · HTTP 502"
    )
    assert TOKEN not in repr(error.args)


def test_the_documented_message_of_an_error_is_kept_and_scrubbed_of_tokens() -> None:
    error = platform_error_for_response(
        status=400,
        headers={"Content-Type": "application/json"},
        body=f'{{"status": "error", "message": "Token {TOKEN} is not valid for db 12"}}',
    )
    assert isinstance(error, PlatformRejected)
    assert error.message == "Token [REDACTED] is not valid for db 12"
    assert platform_text("Invalid Authentication") == "Invalid Authentication"


def test_json_without_a_message_is_not_quoted_and_an_odd_error_code_is_dropped() -> None:
    error = platform_error_for_response(
        status=401, headers={}, body=f'{{"error": "{TOKEN} {TOKEN}", "token": "{TOKEN}"}}'
    )
    assert isinstance(error, PlatformAuthError)
    assert error.code is None
    assert TOKEN not in str(error)
    silent = platform_error_for_response(status=409, headers={}, body=f'{{"token": "{TOKEN}"}}')
    assert silent.message == (
        "the platform answered 409 without a message (45 bytes of JSON, no content type)"
    )


@pytest.mark.parametrize("status", [401, 500])
def test_an_empty_error_answer_says_so(status: int) -> None:
    assert platform_error_for_response(status=status, headers={}, body=b"").message == (
        f"the platform answered {status} with an empty body"
    )
