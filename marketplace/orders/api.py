"""The order routes of the internal intake API (``/api/intake/``, assembled in
``marketplace/intake/api.py`` with the returns' routes): create an order, read it, change
its marketplace state, cancel it. Sign-in, the error shape and its handlers are
``intake_http.py``'s, shared with the returns' routes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema, Status

from marketplace.orders.errors import OrderNotFound
from marketplace.orders.intake_http import ErrorOut, body_example, intake_actor
from marketplace.orders.intake_schema import (
    ORDER_EXAMPLE,
    STATE_EXAMPLE,
    OrderIn,
    OrderNumber,
    StateIn,
)
from marketplace.orders.models import Order
from marketplace.orders.payloads import order_customer, order_shipping_address
from marketplace.orders.selectors import order_get
from marketplace.orders.services.intake import order_cancel, order_create, order_state_change

# --- response shapes -------------------------------------------------------------------


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
# the intake API's assembly hands the order routes the returns app's reader.
OrderReturnsReader = Callable[[Order], list[dict[str, Any]]]


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


def _order_out(order: Order, order_returns: OrderReturnsReader) -> dict[str, Any]:
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
        "returns": order_returns(order),
        "created_at": order.created_at,
        "updated_at": order.updated_at,
    }


# The errors every write with a body may answer.
WRITE_ERRORS = {400: ErrorOut, 401: ErrorOut, 409: ErrorOut, 413: ErrorOut}


def orders_router(*, order_returns: OrderReturnsReader) -> Router:
    """The order routes. ``order_returns`` reads an order's returns for its answers: the
    returns app's, handed in by the intake API's assembly (orders does not import it)."""
    router = Router()

    def order_response(mp_order_number: str) -> dict[str, Any]:
        """The order's answer (404 when there is no such order)."""
        order = order_get(mp_order_number=mp_order_number)
        if order is None:
            raise OrderNotFound(mp_order_number)
        return _order_out(order, order_returns)

    @router.post(
        "/orders",
        response={201: OrderOut, 200: OrderOut, **WRITE_ERRORS},
        summary="Create an order (idempotent for an identical body)",
        description="Stores the order for its seller and queues its push to the platform. "
        "201 with the order when created; 200 with the existing order when the same number "
        "arrives again with the same body; 409 when the number exists with a different "
        "body; 400 with per-field errors (nothing stored).",
        openapi_extra=body_example(ORDER_EXAMPLE),
    )
    def create_order(request: HttpRequest, payload: OrderIn) -> Status[dict[str, Any]]:
        order, created = order_create(data=payload, actor=intake_actor(request))
        return Status(201 if created else 200, order_response(order.mp_order_number))

    @router.get(
        "/orders/{mp_order_number}",
        response={200: OrderOut, 401: ErrorOut, 400: ErrorOut, 404: ErrorOut},
        summary="An order with its lines, fulfillment, sync status, problems and returns",
        description="The order as the marketplace holds it: lines with what was shipped "
        "and cancelled, the push to the platform (``sync``), the seller's fulfillment "
        "problems, and the buyers' returns with their amounts (``returns``). 404 for an "
        "unknown number.",
    )
    def get_order(request: HttpRequest, mp_order_number: OrderNumber) -> dict[str, Any]:
        return order_response(mp_order_number)

    @router.post(
        "/orders/{mp_order_number}/state",
        response={200: OrderOut, 404: ErrorOut, **WRITE_ERRORS},
        summary="Change the marketplace state (PENDING → AWAITING_SHIPMENT, → CANCELLED)",
        description="The buyer paid (``AWAITING_SHIPMENT``) or the marketplace cancels "
        "(``CANCELLED``); the platform learns it through a push. Asking for the state the "
        "order is already in answers 200 and changes nothing. 409 when the order's state "
        "does not allow the change (``SHIPPED`` is never set here: an order becomes "
        "``SHIPPED`` when the seller's fulfillment covers every line).",
        openapi_extra=body_example(STATE_EXAMPLE),
    )
    def change_state(
        request: HttpRequest, mp_order_number: OrderNumber, payload: StateIn
    ) -> dict[str, Any]:
        order_state_change(
            mp_order_number=mp_order_number, state=payload.state, actor=intake_actor(request)
        )
        return order_response(mp_order_number)

    @router.post(
        "/orders/{mp_order_number}/cancel",
        response={200: OrderOut, 401: ErrorOut, 400: ErrorOut, 404: ErrorOut, 409: ErrorOut},
        summary="Cancel the order (marketplace-side cancellation)",
        description="Cancels what is left of the order; the platform learns it through a "
        "push. 409 when the order is no longer in a state that allows it: already cancelled "
        "(a second cancel) or shipped.",
    )
    def cancel_order(request: HttpRequest, mp_order_number: OrderNumber) -> dict[str, Any]:
        order_cancel(
            mp_order_number=mp_order_number,
            actor=intake_actor(request),
            again_is_conflict=True,
        )
        return order_response(mp_order_number)

    return router
