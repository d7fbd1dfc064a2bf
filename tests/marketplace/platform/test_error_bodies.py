"""A message from every JSON error body shape the platform's APIs use; a body without one
is described (status, size, type), never quoted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from marketplace.platform.errors import (
    PlatformAuthError,
    PlatformRateLimited,
    PlatformRejected,
    platform_error_for_response,
)

TOKEN = "a81f0c2e9d4b47f6b2c1e8d9f0a3b5c7"
JSON = {"Content-Type": "application/json"}


def answer(body: Any, status: int = 400, headers: dict | None = None) -> Any:
    text = body if isinstance(body, str) else json.dumps(body)
    return platform_error_for_response(status=status, headers=headers or JSON, body=text)


@pytest.mark.parametrize(
    ("body", "message", "code"),
    [
        ({"message": "db 12 not found"}, "db 12 not found", None),
        ({"status": "fail", "message": "Rate Limit Exceeded."}, "Rate Limit Exceeded.", None),
        (
            {"error": "invalid_request", "error_description": "code is required"},
            "code is required",
            "invalid_request",
        ),
        (
            {"errors": [{"message": "mp_order_number is required"}]},
            "mp_order_number is required",
            None,
        ),
        (
            {"errors": [{"code": "INVALID_FILTER"}, {"code": "UNKNOWN_PARAMETER"}]},
            "INVALID_FILTER; UNKNOWN_PARAMETER",
            "INVALID_FILTER",
        ),
        (
            {"errors": [{"code": "BAD_DATE", "message": "purchase_date must end in Z"}]},
            "purchase_date must end in Z",
            "BAD_DATE",
        ),
        ([{"message": "first"}, {"message": "second"}], "first; second", None),
        (["refund_status is unknown"], "refund_status is unknown", None),
        (
            {"error": {"code": "NOT_FOUND", "message": "no such refund"}},
            "no such refund",
            "NOT_FOUND",
        ),
        ({"errors": {"created_after": ["must be UTC"]}}, "created_after: must be UTC", None),
        ({"detail": "Not found."}, "Not found.", None),
        ({"errors": "page_size out of range"}, "page_size out of range", None),
    ],
)
def test_a_message_is_read_from_every_shape(body: Any, message: str, code: str | None) -> None:
    error = answer(body)
    assert isinstance(error, PlatformRejected)
    assert error.message == message
    assert error.code == code
    assert error.status == 400


def test_many_errors_are_bounded_to_three() -> None:
    error = answer({"errors": [{"message": f"problem {i}"} for i in range(10)]})
    assert error.message == "problem 0; problem 1; problem 2"


def test_tokens_in_any_shape_are_scrubbed() -> None:
    error = answer({"errors": [{"message": f"token {TOKEN} is revoked"}]}, status=401)
    assert isinstance(error, PlatformAuthError)
    assert error.message == "token [REDACTED] is revoked"


def test_the_shape_does_not_change_the_class() -> None:
    limited = answer(
        {"status": "fail", "message": "Rate Limit Exceeded. Please wait 3 seconds"},
        status=429,
        headers={**JSON, "Retry-After": "3"},
    )
    assert isinstance(limited, PlatformRateLimited)
    assert limited.retry_after == 3
    oauth = answer({"errors": [{"code": "invalid_grant"}]}, status=400)
    assert isinstance(oauth, PlatformAuthError)  # an OAuth code found nested still counts


@pytest.mark.parametrize(
    ("body", "content_type", "described"),
    [
        (
            {"token": TOKEN, "echo": {"password": "hunter2"}},
            "application/json",
            "the platform answered 400 without a message ({size} bytes of JSON, application/json)",
        ),
        (
            f"<html>api_key={TOKEN}</html>",
            "text/html; charset=UTF-8",
            "the platform answered 400 with {size} bytes that are not JSON (text/html)",
        ),
        (
            '{"message": "cut off',
            "",
            "the platform answered 400 with {size} bytes that are not JSON",
        ),
        ([1, 2, {"n": 3}], "application/json", "the platform answered 400 without a message"),
    ],
)
def test_a_body_without_a_readable_message_is_described_not_quoted(
    body: Any, content_type: str, described: str
) -> None:
    error = answer(body, headers={"Content-Type": content_type} if content_type else {})
    size = len(body.encode() if isinstance(body, str) else json.dumps(body).encode())
    assert error.message.startswith(described.format(size=size))
    assert TOKEN not in str(error)
    assert "hunter2" not in str(error)
