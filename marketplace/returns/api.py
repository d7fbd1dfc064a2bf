"""The return routes of the intake API (``/api/intake/``): ``router``, mounted by the
intake API's assembly (``marketplace/intake/api.py``) beside the order routes, which it
also hands ``order_returns_out`` (an order's answers show its returns). Sign-in and the
error shape (``{"detail", "fields"}``) are the intake API's (``orders/intake_http.py``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import Http404, HttpRequest
from ninja import Router, Status

from marketplace.orders.api import OrderReturnOut
from marketplace.orders.errors import OrderNotFound
from marketplace.orders.intake_http import ErrorOut, body_example, intake_actor
from marketplace.orders.intake_schema import OrderNumber
from marketplace.orders.models import Order
from marketplace.returns.intake_schema import RETURN_EXAMPLE, ReturnIn
from marketplace.returns.models import Return, ReturnLine
from marketplace.returns.services.intake import return_create


class ReturnOut(OrderReturnOut):
    mp_order_number: str


def return_out(return_request: Return) -> dict[str, Any]:
    """A return with its lines and what the ledger refunded for it (its order, lines and
    ledger prefetched or read here)."""
    return {
        "mp_order_number": return_request.order.mp_order_number,
        "mp_return_number": return_request.mp_return_number,
        "status": return_request.status,
        "rma": return_request.rma,
        "notes": return_request.notes,
        "reason": return_request.reason,
        "carrier": return_request.carrier,
        "tracking_number": return_request.tracking_number,
        "request_date": return_request.request_date,
        "respond_date": return_request.respond_date,
        "currency": return_request.order.currency,
        "decision": return_request.decision,
        "refunded_amount": sum(
            (entry.amount for entry in return_request.ledger.all()), start=Decimal("0")
        ),
        "errors": return_request.errors or [],
        "return_lines": [
            {
                "mp_return_line_number": line.mp_return_line_number,
                "mp_line_number": line.order_line.mp_line_number,
                "quantity": line.quantity,
                "preauthorized": line.preauthorized,
                "requested_refund_principal": line.requested_refund_principal,
                "requested_refund_tax": line.requested_refund_tax,
                "principal_refund_amount": line.principal_refund_amount,
                "shipping_refund_amount": line.shipping_refund_amount,
            }
            for line in return_request.lines.all()
        ],
    }


def _returns_query() -> QuerySet[Return]:
    return (
        Return.objects.select_related("order")
        .prefetch_related(
            Prefetch(
                "lines", queryset=ReturnLine.objects.select_related("order_line").order_by("id")
            ),
            "ledger",
        )
        .order_by("created_at", "id")
    )


def order_returns_out(order: Order) -> list[dict[str, Any]]:
    """The order's returns, for the order routes' answers (handed to them by the intake
    API's assembly)."""
    return [return_out(ret) for ret in _returns_query().filter(order=order)]


router = Router()


@router.post(
    "/orders/{mp_order_number}/returns",
    response={
        201: ReturnOut,
        200: ReturnOut,
        400: ErrorOut,
        401: ErrorOut,
        404: ErrorOut,
        409: ErrorOut,
        413: ErrorOut,
    },
    summary="Create a buyer's return of shipped units (idempotent for an identical body)",
    description="Records the buyer's return and sends it to the seller through the "
    "platform; the amounts asked back are what the buyer paid for the returned units. "
    "201 with the return when created; 200 with the existing return for the same number "
    "and body; 409 for the same number with a different body; 404 for an unknown order; "
    "400 with per-field errors (a line not on the order, not shipped or already returned, "
    "a ``request_date`` before 2000 or after tomorrow).",
    openapi_extra=body_example(RETURN_EXAMPLE),
)
def create_return(
    request: HttpRequest, mp_order_number: OrderNumber, payload: ReturnIn
) -> Status[dict[str, Any]]:
    return_request, created = return_create(
        mp_order_number=mp_order_number, data=payload, actor=intake_actor(request)
    )
    fresh = _returns_query().get(pk=return_request.pk)
    return Status(201 if created else 200, return_out(fresh))


@router.get(
    "/orders/{mp_order_number}/returns",
    response={200: list[ReturnOut], 400: ErrorOut, 401: ErrorOut, 404: ErrorOut},
    summary="The order's returns",
    description="Every return of the order, oldest first, each with its lines, where it "
    "stands at the platform (``status``), the marketplace's decision and what was "
    "refunded (``refunded_amount``, in ``currency``). 404 for an unknown order.",
)
def list_returns(request: HttpRequest, mp_order_number: OrderNumber) -> list[dict[str, Any]]:
    order = Order.objects.filter(mp_order_number=mp_order_number).first()
    if order is None:
        raise OrderNotFound(mp_order_number)
    return order_returns_out(order)


@router.get(
    "/orders/{mp_order_number}/returns/{mp_return_number}",
    response={200: ReturnOut, 400: ErrorOut, 401: ErrorOut, 404: ErrorOut},
    summary="One return of the order",
    description="The return with its lines, status, decision and refunded amount. 404 "
    "for an unknown order or return number.",
)
def get_return(
    request: HttpRequest, mp_order_number: OrderNumber, mp_return_number: OrderNumber
) -> dict[str, Any]:
    found = (
        _returns_query()
        .filter(order__mp_order_number=mp_order_number, mp_return_number=mp_return_number)
        .first()
    )
    if found is None:
        raise Http404("no such return")
    return return_out(found)
