"""The control API's decorator (under /sandbox/api: JSON in and out, no auth, local only)
and the error its views raise."""

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from sandbox.common.json_bodies import BadBody, error_response

View = Callable[..., JsonResponse]


class ControlError(Exception):
    """A refusal of a control call: ``{"error", "message", **extra}`` with ``status``."""

    def __init__(self, error: str, message: str, status: int, **extra: object) -> None:
        super().__init__(message)
        self.error = error
        self.status = status
        self.extra = extra


def control(methods: tuple[str, ...]) -> Callable[[View], View]:
    """CSRF-exempt JSON view; bad bodies become 400s with one error shape."""

    def decorate(view: View) -> View:
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> JsonResponse:
            if request.method not in methods:
                return error_response("method_not_allowed", f"use {', '.join(methods)}", 405)
            try:
                return view(request, *args, **kwargs)
            except BadBody as exc:
                return error_response("bad_request", str(exc), 400)
            except ControlError as exc:
                return error_response(exc.error, str(exc), exc.status, **exc.extra)

        return wrapper

    return decorate


def required_str(body: dict, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise BadBody(f"{key} (non-empty string) is required")
    return value
