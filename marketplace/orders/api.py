"""The internal order intake API (django-ninja), mounted at ``/api/intake/``.

Authentication: ``Authorization: Bearer <key>`` or ``X-API-Key: <key>`` (keys from
``manage.py create_api_key``). Errors, all JSON ``{"detail", "fields": {path: [messages]}}``
(``fields`` empty when no field is at fault): 400 bad input or a body that is not JSON
(nothing is stored), 401 no or a wrong key, 404 unknown order or path, 405 a method the
path does not take, 409 illegal transition or an existing order number with a different
body, 413 a body over the size limit (``DATA_UPLOAD_MAX_MEMORY_SIZE``).

Text fields refuse control (Unicode Cc), format (Cf: zero-width, bidi) and line/paragraph
separator (Zl, Zp) characters (``delivery_notes`` may hold tabs and line breaks);
``currency`` is an ISO 4217 currency, not a metal, fund, test or "no currency" code.
OpenAPI: ``/api/intake/openapi.json``, docs at ``/api/intake/docs``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI, Schema, Status
from ninja.errors import HttpError, ValidationError
from ninja.security import APIKeyHeader, HttpBearer

from marketplace.orders.errors import (
    DuplicateOrderConflict,
    IllegalTransition,
    IntakeInvalid,
    OrderNotFound,
)
from marketplace.orders.intake_schema import (
    ORDER_EXAMPLE,
    STATE_EXAMPLE,
    OrderIn,
    OrderNumber,
    StateIn,
)
from marketplace.orders.models import ApiKey, Order
from marketplace.orders.payloads import order_customer, order_shipping_address
from marketplace.orders.selectors import order_get
from marketplace.orders.services.api_keys import api_key_authenticate
from marketplace.orders.services.intake import order_cancel, order_create, order_state_change


class BearerKey(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiKey | None:
        return api_key_authenticate(raw_key=token)


class HeaderKey(APIKeyHeader):
    param_name = "X-API-Key"

    def authenticate(self, request: HttpRequest, key: str | None) -> ApiKey | None:
        return api_key_authenticate(raw_key=key or "")


api = NinjaAPI(
    title="Marketplace order intake",
    version="1.0.0",
    description=__doc__,
    urls_namespace="intake",
    auth=[BearerKey(), HeaderKey()],
)


# --- response shapes -------------------------------------------------------------------


class ErrorOut(Schema):
    detail: str
    fields: dict[str, list[str]] = {}


class ShipmentOut(Schema):
    quantity: int
    carrier: str
    tracking_number: str
    tracking_url: str
    shipped_date: date | None


class CancellationOut(Schema):
    quantity: int
    reason: str


class LineOut(Schema):
    mp_line_number: str
    sku: str
    product_name: str
    quantity: int
    unit_price: Decimal
    shipping_method: str
    shipping_price: Decimal
    taxes: list[dict[str, Any]]
    discounts: list[dict[str, Any]]
    shipped_quantity: int
    cancelled_quantity: int
    shipments: list[ShipmentOut]
    cancellations: list[CancellationOut]


class SyncOut(Schema):
    status: str
    desired_version: int
    pushed_version: int
    attempts: int
    next_attempt_at: datetime | None
    last_error: str
    last_pushed_at: datetime | None


class ProblemOut(Schema):
    code: str
    mp_line_number: str
    message: str
    reported_at: datetime | None
    resolved_at: datetime | None


class ReturnLineOut(Schema):
    mp_return_line_number: str
    mp_line_number: str
    quantity: int
    preauthorized: bool
    requested_refund_principal: Decimal
    requested_refund_tax: Decimal
    principal_refund_amount: Decimal | None
    shipping_refund_amount: Decimal | None


class OrderReturnOut(Schema):
    """A buyer's return as the order's ``GET`` shows it (the return's ``GET`` adds its
    order number)."""

    mp_return_number: str
    status: str
    rma: str
    notes: str
    reason: str
    carrier: str
    tracking_number: str
    request_date: date
    respond_date: date
    currency: str
    decision: str
    refunded_amount: Decimal
    errors: list[dict[str, Any]]
    return_lines: list[ReturnLineOut]


# Returns are of orders, but orders knows nothing of them (the apps import downwards):
# the returns app registers here how to read an order's returns (ReturnsConfig.ready).
OrderReturnsReader = Callable[[Order], list[dict[str, Any]]]
_order_returns_readers: list[OrderReturnsReader] = []


def order_returns_reader_register(reader: OrderReturnsReader) -> None:
    if reader not in _order_returns_readers:
        _order_returns_readers.append(reader)


def _returns_of(order: Order) -> list[dict[str, Any]]:
    return [entry for reader in _order_returns_readers for entry in reader(order)]


class OrderOut(Schema):
    mp_order_number: str
    seller: str
    marketplace_state: str
    sales_channel: str
    purchase_date: datetime
    currency: str
    location: str
    customer: dict[str, str]
    shipping_address: dict[str, str]
    delivery_notes: str
    earliest_ship_date: datetime | None
    latest_ship_date: datetime | None
    earliest_delivery_date: datetime | None
    latest_delivery_date: datetime | None
    order_lines: list[LineOut]
    sync: SyncOut
    problems: list[ProblemOut]
    returns: list[OrderReturnOut]
    created_at: datetime
    updated_at: datetime


def _order_out(order: Order) -> dict[str, Any]:
    sync = order.sync
    return {
        "mp_order_number": order.mp_order_number,
        "seller": order.seller.user.get_username(),
        "marketplace_state": order.state,
        "sales_channel": order.sales_channel,
        "purchase_date": order.purchase_date,
        "currency": order.currency,
        "location": order.location,
        "customer": order_customer(order),
        "shipping_address": order_shipping_address(order),
        "delivery_notes": order.delivery_notes,
        "earliest_ship_date": order.earliest_ship_date,
        "latest_ship_date": order.latest_ship_date,
        "earliest_delivery_date": order.earliest_delivery_date,
        "latest_delivery_date": order.latest_delivery_date,
        "order_lines": [
            {
                "mp_line_number": line.mp_line_number,
                "sku": line.sku,
                "product_name": line.product_name,
                "quantity": line.quantity,
                "unit_price": line.unit_price,
                "shipping_method": line.shipping_method,
                "shipping_price": line.shipping_price,
                "taxes": line.taxes,
                "discounts": line.discounts,
                "shipped_quantity": sum(s.quantity for s in line.shipments.all()),
                "cancelled_quantity": sum(c.quantity for c in line.cancellations.all()),
                "shipments": list(line.shipments.all()),
                "cancellations": list(line.cancellations.all()),
            }
            for line in order.lines.all()
        ],
        "sync": sync,
        "problems": list(order.problems.all()),
        "returns": _returns_of(order),
        "created_at": order.created_at,
        "updated_at": order.updated_at,
    }


def _order_response(mp_order_number: str) -> dict[str, Any]:
    order = order_get(mp_order_number=mp_order_number)
    if order is None:  # pragma: no cover - callers just stored or found it
        raise OrderNotFound(mp_order_number)
    return _order_out(order)


# --- errors ------------------------------------------------------------------------------


def _field_path(loc: tuple[Any, ...] | list[Any]) -> str:
    # ninja reports ("body", "<param name>", field, ...); people want the field path only.
    parts = list(loc)
    if parts and parts[0] in {"body", "query", "path", "header"}:
        parts = parts[1:]
    if parts and parts[0] in {"payload", "data"}:
        parts = parts[1:]
    return ".".join(str(p) for p in parts) or "body"


@api.exception_handler(ValidationError)
def _validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    fields: dict[str, list[str]] = {}
    for error in exc.errors:
        # Our validators raise ValueError; pydantic prefixes its message with "Value error, ".
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        fields.setdefault(_field_path(error.get("loc", ())), []).append(message)
    return api.create_response(
        request, {"detail": "invalid request body", "fields": fields}, status=400
    )


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    # Django raises this on reading request.body; without a handler it becomes an HTML
    # 400 (or a traceback under DEBUG). Nothing of the body was parsed or stored.
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return api.create_response(
        request,
        {"detail": f"request body larger than {limit} bytes", "fields": {}},
        status=413,
    )


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja's own: 401 (no or a wrong key), 400 (a body that is not JSON), ...
    fields: dict[str, list[str]] = {}
    if exc.status_code == 400:
        fields = {"body": ["must be a JSON object"]}
    return api.create_response(
        request, {"detail": str(exc), "fields": fields}, status=exc.status_code
    )


@api.exception_handler(Http404)
def _http_404(request: HttpRequest, exc: Http404) -> HttpResponse:
    return api.create_response(request, {"detail": "not found", "fields": {}}, status=404)


def intake_error_response(status: int, detail: str) -> JsonResponse:
    """An error answered outside ninja's views (no route, a method a route lacks)."""
    return JsonResponse({"detail": detail, "fields": {}}, status=status)


@api.exception_handler(IntakeInvalid)
def _intake_invalid(request: HttpRequest, exc: IntakeInvalid) -> HttpResponse:
    return api.create_response(
        request, {"detail": "invalid request body", "fields": exc.fields}, status=400
    )


@api.exception_handler(OrderNotFound)
def _not_found(request: HttpRequest, exc: OrderNotFound) -> HttpResponse:
    return api.create_response(request, {"detail": f"no order {exc}", "fields": {}}, status=404)


@api.exception_handler(IllegalTransition)
def _illegal(request: HttpRequest, exc: IllegalTransition) -> HttpResponse:
    return api.create_response(request, {"detail": exc.message, "fields": {}}, status=409)


@api.exception_handler(DuplicateOrderConflict)
def _duplicate(request: HttpRequest, exc: DuplicateOrderConflict) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc), "fields": {}}, status=409)


# --- endpoints ---------------------------------------------------------------------------


def _body_example(example: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` giving an operation's JSON body an example (merged into the
    generated request body: the schema stays as generated)."""
    return {"requestBody": {"content": {"application/json": {"example": example}}}}


def _actor(request: HttpRequest) -> str:
    key = getattr(request, "auth", None)
    return f"api:{key.name}" if isinstance(key, ApiKey) else "api"


@api.post(
    "/orders",
    response={
        201: OrderOut,
        401: ErrorOut,
        200: OrderOut,
        400: ErrorOut,
        409: ErrorOut,
        413: ErrorOut,
    },
    summary="Create an order (idempotent for an identical body)",
    description="Stores the order for its seller and queues its push to the platform. "
    "201 with the order when created; 200 with the existing order when the same number "
    "arrives again with the same body; 409 when the number exists with a different body; "
    "400 with per-field errors (nothing stored).",
    openapi_extra=_body_example(ORDER_EXAMPLE),
)
def create_order(request: HttpRequest, payload: OrderIn) -> Status[dict[str, Any]]:
    order, created = order_create(data=payload, actor=_actor(request))
    return Status(201 if created else 200, _order_response(order.mp_order_number))


@api.get(
    "/orders/{mp_order_number}",
    response={200: OrderOut, 401: ErrorOut, 400: ErrorOut, 404: ErrorOut},
    summary="An order with its lines, fulfillment, sync status, problems and returns",
    description="The order as the marketplace holds it: lines with what was shipped and "
    "cancelled, the push to the platform (``sync``), the seller's fulfillment problems, "
    "and the buyers' returns with their amounts (``returns``). 404 for an unknown number.",
)
def get_order(request: HttpRequest, mp_order_number: OrderNumber) -> dict[str, Any]:
    order = order_get(mp_order_number=mp_order_number)
    if order is None:
        raise OrderNotFound(mp_order_number)
    return _order_out(order)


@api.post(
    "/orders/{mp_order_number}/state",
    response={
        200: OrderOut,
        401: ErrorOut,
        400: ErrorOut,
        404: ErrorOut,
        409: ErrorOut,
        413: ErrorOut,
    },
    summary="Change the marketplace state (PENDING → AWAITING_SHIPMENT, → CANCELLED)",
    description="The buyer paid (``AWAITING_SHIPMENT``) or the marketplace cancels "
    "(``CANCELLED``); the platform learns it through a push. Asking for the state the order "
    "is already in answers 200 and changes nothing. 409 when the order's state does not "
    "allow the change (``SHIPPED`` is never set here: an order becomes ``SHIPPED`` when "
    "the seller's fulfillment covers every line).",
    openapi_extra=_body_example(STATE_EXAMPLE),
)
def change_state(
    request: HttpRequest, mp_order_number: OrderNumber, payload: StateIn
) -> dict[str, Any]:
    order_state_change(mp_order_number=mp_order_number, state=payload.state, actor=_actor(request))
    return _order_response(mp_order_number)


@api.post(
    "/orders/{mp_order_number}/cancel",
    response={200: OrderOut, 401: ErrorOut, 400: ErrorOut, 404: ErrorOut, 409: ErrorOut},
    summary="Cancel the order (marketplace-side cancellation)",
    description="Cancels what is left of the order; the platform learns it through a push. "
    "409 when the order is no longer in a state that allows it: already cancelled (a "
    "second cancel) or shipped.",
)
def cancel_order(request: HttpRequest, mp_order_number: OrderNumber) -> dict[str, Any]:
    order_cancel(mp_order_number=mp_order_number, actor=_actor(request), again_is_conflict=True)
    return _order_response(mp_order_number)
