"""The order intake API under ``/api/intake/`` (OpenAPI at ``/api/intake/openapi.json``).

Every answer under ``/api/intake/`` is JSON, errors ``{"detail", "fields"}``: a path no
route matches (``orders/a%2Fb`` is ``orders/a/b`` to the resolver) is a JSON 404, and a
method a route does not take a JSON 405 (ninja answers those two outside its handlers).
"""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, path, re_path
from django.views.decorators.csrf import csrf_exempt

from marketplace.intake.api import intake_api_build
from marketplace.orders.intake_http import intake_error_response


def _json_405(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if response.status_code == 405 and "json" not in response.get("Content-Type", ""):
            allowed = response.get("Allow", "")
            response = intake_error_response(405, f"method not allowed; allowed: {allowed}")
            response["Allow"] = allowed
        return response

    return wrapper


def _with_json_405(patterns: list[URLPattern | URLResolver]) -> None:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _with_json_405(pattern.url_patterns)
        else:
            pattern.callback = _json_405(pattern.callback)


@csrf_exempt
def intake_not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    return intake_error_response(404, "not found")


_patterns, _app_name, _namespace = intake_api_build().urls
_with_json_405(_patterns)

urlpatterns = [
    path("intake/", (_patterns, _app_name, _namespace)),
    re_path(r"^intake/(?P<rest>.*)$", intake_not_found),
]
