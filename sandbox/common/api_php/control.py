"""The control-API decorator for issue 12's additions under /sandbox/api (the sandbox's
``control`` plus the API's own errors turned into the control API's error shape), and the
rate-limit switch."""

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, JsonResponse

from sandbox.common.api_php import rate_limits
from sandbox.common.api_php.errors import ApiError
from sandbox.common.control import control
from sandbox.common.endpoint import View
from sandbox.common.json_bodies import BadBody, error_response, json_object_body


def platform_control(methods: tuple[str, ...]) -> Callable[[View], View]:
    def decorate(view: View) -> View:
        @wraps(view)
        def answering(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            try:
                return view(request, *args, **kwargs)
            except ApiError as exc:
                return error_response(
                    "bad_request" if exc.status == 400 else "refused", exc.message, exc.status
                )

        return control(methods)(answering)

    return decorate


def required_text(body: dict, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise BadBody(f"{key} (non-empty string) is required")
    return value


@platform_control(("GET", "POST"))
def rate_limits_view(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        body = json_object_body(request)
        group = required_text(body, "group")
        if group not in rate_limits.DEFAULT_LIMITS:
            raise BadBody(f"group must be one of {sorted(rate_limits.DEFAULT_LIMITS)}")
        limit, window = body.get("limit"), body.get("window_seconds", 60)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise BadBody("limit must be a whole number >= 1")
        if isinstance(window, bool) or not isinstance(window, int | float) or window <= 0:
            raise BadBody("window_seconds must be a number > 0")
        rate_limits.configure(group=group, limit=limit, window_seconds=float(window))
    return JsonResponse({"limits": rate_limits.snapshot()})
