"""The one place that turns a return into the platform's ``PUT /orders/{n}/returns/{r}``
body (every field the readings table makes required; the parcel only when known).

``mp_order_number`` is in the body too, equal to the path's: the reference's field list
marks it required (``…/returns/create-order-returns``), though its own example omits it.
``return_type`` is ``SHIP`` or ``NO_RETURN`` (``IN_STORE`` is v2's only).

Money goes out as JSON numbers (the contract's examples) from 2-decimal Decimals.
"""

from __future__ import annotations

from typing import Any

from marketplace.orders.payloads import order_shipping_address
from marketplace.returns.models import Return


def _number(value: Any) -> float:
    return float(str(value))


def return_payload(return_request: Return) -> dict[str, Any]:
    order = return_request.order
    lines = []
    for line in return_request.lines.select_related("order_line").order_by("id"):
        order_line = line.order_line
        item: dict[str, Any] = {
            "mp_return_line_number": line.mp_return_line_number,
            "mp_order_line_number": order_line.mp_line_number,
            "sku": order_line.sku,
            "quantity": line.quantity,
            "currency": order.currency,
            "requested_refund_principal": _number(line.requested_refund_principal),
            "requested_refund_tax": _number(line.requested_refund_tax),
            "reason": return_request.reason,
            "preauthorized": line.preauthorized,
            "product_name": order_line.product_name,
            "unit_price": _number(order_line.unit_price),
            "tax": _number(line.requested_refund_tax),
        }
        if return_request.carrier:
            item["carrier"] = return_request.carrier
        if return_request.tracking_number:
            item["tracking_number"] = return_request.tracking_number
        lines.append(item)
    address = {k: v for k, v in order_shipping_address(order).items() if v}
    payload: dict[str, Any] = {
        "mp_order_number": order.mp_order_number,
        "return_lines": lines,
        "request_date": return_request.request_date.isoformat(),
        "respond_date": return_request.respond_date.isoformat(),
        "shipping_address": address,
        "return_type": return_request.return_type,
    }
    if order.customer_email:
        payload["customer_email"] = order.customer_email
    return payload
