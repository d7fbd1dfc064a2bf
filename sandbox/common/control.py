"""The control API's decorator (under /sandbox/api: JSON in and out, no auth, local only)
and the error its views raise."""

from collections.abc import Callable

from django.http import JsonResponse

from sandbox.common.endpoint import ErrorShape, View, endpoint
from sandbox.common.json_bodies import BadBody, error_response
from sandbox.common.query_params import problems_message


class ControlError(Exception):
    """A refusal of a control call: ``{"error", "message", **extra}`` with ``status``."""

    def __init__(self, error: str, message: str, status: int, **extra: object) -> None:
        super().__init__(message)
        self.error = error
        self.status = status
        self.extra = extra


def _answer(exc: Exception) -> JsonResponse | None:
    if isinstance(exc, BadBody):
        return error_response("bad_request", str(exc), 400)
    if isinstance(exc, ControlError):
        return error_response(exc.error, str(exc), exc.status, **exc.extra)
    return None


ERRORS = ErrorShape(
    method_not_allowed=lambda methods: error_response(
        "method_not_allowed", f"use {', '.join(methods)}", 405
    ),
    query_refused=lambda problems: error_response("bad_request", problems_message(problems), 400),
    answer=_answer,
)


def control(methods: tuple[str, ...]) -> Callable[[View], View]:
    """The common endpoint for control views: CSRF-exempt JSON, no auth, the query string
    left to the view; bad bodies and ``ControlError`` become answers in one error shape."""
    return endpoint(methods=methods, errors=ERRORS, parameters=None)


def required_str(body: dict, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise BadBody(f"{key} (non-empty string) is required")
    return value
