"""What every route of the intake API shares, whichever app's it is: the sign-in (an API
key), the error shape ``{"detail", "fields"}`` and its handlers, who called (for the
records a call writes) and a body's example in the OpenAPI document.

Orders and returns both import it (it sits in orders, the lower of the two); the API
itself is assembled above both, in ``marketplace/intake/api.py``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI, Schema
from ninja.errors import HttpError, ValidationError
from ninja.security import APIKeyHeader, HttpBearer

from marketplace.orders.errors import IllegalTransition, IntakeInvalid, OrderNotFound
from marketplace.orders.models import ApiKey
from marketplace.orders.services.api_keys import api_key_authenticate


class BearerKey(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiKey | None:
        return api_key_authenticate(raw_key=token)


class HeaderKey(APIKeyHeader):
    param_name = "X-API-Key"

    def authenticate(self, request: HttpRequest, key: str | None) -> ApiKey | None:
        return api_key_authenticate(raw_key=key or "")


class ErrorOut(Schema):
    detail: str
    fields: dict[str, list[str]] = {}


def intake_actor(request: HttpRequest) -> str:
    """Who made the call, as the records it writes name them (``api:<key name>``)."""
    key = getattr(request, "auth", None)
    return f"api:{key.name}" if isinstance(key, ApiKey) else "api"


def body_example(example: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` giving an operation's JSON body an example (merged into the
    generated request body: the schema stays as generated)."""
    return {"requestBody": {"content": {"application/json": {"example": example}}}}


def intake_error_response(status: int, detail: str) -> JsonResponse:
    """An error answered outside ninja's views (no route, a method a route lacks)."""
    return JsonResponse({"detail": detail, "fields": {}}, status=status)


def field_path(loc: tuple[Any, ...] | list[Any]) -> str:
    # ninja reports ("body", "<param name>", field, ...); people want the field path only.
    parts = list(loc)
    if parts and parts[0] in {"body", "query", "path", "header"}:
        parts = parts[1:]
    if parts and parts[0] in {"payload", "data"}:
        parts = parts[1:]
    return ".".join(str(p) for p in parts) or "body"


def intake_errors_install(api: NinjaAPI, *, conflicts: tuple[type[Exception], ...]) -> None:
    """Answer every error of ``api`` in the intake API's shape. ``conflicts``: the
    exceptions answered 409 with their message (a number that exists with another body)."""

    def answer(
        request: HttpRequest, status: int, detail: str, fields: dict[str, list[str]] | None = None
    ) -> HttpResponse:
        body = {"detail": detail, "fields": fields or {}}
        return api.create_response(request, body, status=status)

    @api.exception_handler(ValidationError)
    def validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        fields: dict[str, list[str]] = {}
        for error in exc.errors:
            # Our validators raise ValueError; pydantic prefixes its message with "Value error, ".
            message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
            fields.setdefault(field_path(error.get("loc", ())), []).append(message)
        return answer(request, 400, "invalid request body", fields)

    @api.exception_handler(RequestDataTooBig)
    def too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
        # Django raises this on reading request.body; without a handler it becomes an HTML
        # 400 (or a traceback under DEBUG). Nothing of the body was parsed or stored.
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return answer(request, 413, f"request body larger than {limit} bytes")

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        # ninja's own: 401 (no or a wrong key), 400 (a body that is not JSON), ...
        fields = {"body": ["must be a JSON object"]} if exc.status_code == 400 else {}
        return answer(request, exc.status_code, str(exc), fields)

    @api.exception_handler(Http404)
    def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return answer(request, 404, "not found")

    @api.exception_handler(IntakeInvalid)
    def intake_invalid(request: HttpRequest, exc: IntakeInvalid) -> HttpResponse:
        return answer(request, 400, "invalid request body", exc.fields)

    @api.exception_handler(OrderNotFound)
    def no_order(request: HttpRequest, exc: OrderNotFound) -> HttpResponse:
        return answer(request, 404, f"no order {exc}")

    @api.exception_handler(IllegalTransition)
    def illegal(request: HttpRequest, exc: IllegalTransition) -> HttpResponse:
        return answer(request, 409, exc.message)

    for exc_class in conflicts:

        @api.exception_handler(exc_class)
        def conflict(request: HttpRequest, exc: Exception) -> HttpResponse:
            return answer(request, 409, str(exc))
