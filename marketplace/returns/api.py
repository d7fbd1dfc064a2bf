"""The return route of the intake API (``orders.api``'s ``api``, ``/api/intake/``).

Registered from ``ReturnsConfig.ready`` (orders sits below returns and does not import
it), before the API's URLs and OpenAPI document are built. Errors have the intake API's
shape (``{"detail", "fields"}``).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Schema, Status

from marketplace.orders.api import ErrorOut, _actor, _body_example, api
from marketplace.orders.intake_schema import OrderNumber
from marketplace.returns.errors import ReturnConflict
from marketplace.returns.intake_schema import RETURN_EXAMPLE, ReturnIn
from marketplace.returns.models import Return
from marketplace.returns.services.intake import return_create


class ReturnLineOut(Schema):
    mp_return_line_number: str
    mp_line_number: str
    quantity: int
    preauthorized: bool
    requested_refund_principal: Decimal
    requested_refund_tax: Decimal
    principal_refund_amount: Decimal | None
    shipping_refund_amount: Decimal | None


class ReturnOut(Schema):
    mp_order_number: str
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
    errors: list[dict[str, Any]]
    return_lines: list[ReturnLineOut]


def return_out(return_request: Return) -> dict[str, Any]:
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
            for line in return_request.lines.select_related("order_line").order_by("id")
        ],
    }


@api.exception_handler(ReturnConflict)
def _return_conflict(request: HttpRequest, exc: ReturnConflict) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc), "fields": {}}, status=409)


@api.post(
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
    openapi_extra=_body_example(RETURN_EXAMPLE),
)
def create_return(request: HttpRequest, mp_order_number: OrderNumber, payload: ReturnIn) -> Status:
    return_request, created = return_create(
        mp_order_number=mp_order_number, data=payload, actor=_actor(request)
    )
    fresh = Return.objects.select_related("order").get(pk=return_request.pk)
    return Status(201 if created else 200, return_out(fresh))
