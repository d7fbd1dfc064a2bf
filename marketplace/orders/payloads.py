"""The one place that turns an order into the platform's ``PUT /orders/{n}`` body.

Every push sends the order's *current* state in full (PUT is idempotent). Optional
contract fields are included only when the order has them; empty strings are sent as
absent rather than as "" so the platform never stores a blank where it expects nothing.
Money goes out as JSON numbers (the contract's examples), from 2-decimal Decimals.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from marketplace.orders.models import Order, OrderLine
from marketplace.platform.dates import to_wire


def _number(value: Decimal | str | int | float) -> float:
    return float(Decimal(str(value)))


def _compact(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value not in (None, "")}


def order_line_payload(line: OrderLine) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "mp_line_number": line.mp_line_number,
        "sku": line.sku,
        "product_name": line.product_name,
        "quantity": line.quantity,
        "unit_price": _number(line.unit_price),
        "shipping_price": _number(line.shipping_price),
        "taxes": [{"type": t["type"], "amount": _number(t["amount"])} for t in line.taxes],
        "discounts": [
            {"name": d["name"], "amount": _number(d["amount"]), "type": d["type"]}
            for d in line.discounts
        ],
    }
    if line.shipping_method:
        payload["shipping_method"] = line.shipping_method
    return payload


def order_customer(order: Order) -> dict[str, str]:
    """The contract's ``customer`` object, every field (empty ones included)."""
    return {
        "full_name": order.customer_full_name,
        "email": order.customer_email,
        "phone": order.customer_phone,
        "vat": order.customer_vat,
    }


def order_shipping_address(order: Order) -> dict[str, str]:
    """The contract's ``shipping_address`` object, every field (empty ones included)."""
    return {
        "full_name": order.ship_full_name,
        "address1": order.ship_address1,
        "address2": order.ship_address2,
        "address3": order.ship_address3,
        "city": order.ship_city,
        "state": order.ship_state,
        "postal_code": order.ship_postal_code,
        "country_code": order.ship_country_code,
        "country_code_iso2": order.ship_country_code_iso2,
        "address_type": order.ship_address_type,
        "phone": order.ship_phone,
    }


def order_payload(order: Order, *, lines: list[OrderLine] | None = None) -> dict[str, Any]:
    """The full order body, with every required contract field."""
    lines = list(order.lines.all()) if lines is None else lines
    payload: dict[str, Any] = {
        "mp_order_number": order.mp_order_number,
        "sales_channel": order.sales_channel,
        "customer": _compact(order_customer(order)),
        "purchase_date": to_wire(order.purchase_date),
        "currency": order.currency,
        "shipping_address": _compact(order_shipping_address(order)),
        "order_lines": [order_line_payload(line) for line in lines],
        "marketplace_state": order.state,
    }
    optional = {
        "location": order.location,
        "delivery_notes": order.delivery_notes,
        "earliest_ship_date": order.earliest_ship_date,
        "latest_ship_date": order.latest_ship_date,
        "earliest_delivery_date": order.earliest_delivery_date,
        "latest_delivery_date": order.latest_delivery_date,
    }
    for key, value in _compact(optional).items():
        payload[key] = to_wire(value) if isinstance(value, datetime) else value
    return payload
