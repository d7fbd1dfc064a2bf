"""The one place that turns an order into the platform's ``PUT /orders/{n}`` body.

Every push sends the order's *current* state in full (PUT is idempotent). Optional
contract fields are included only when the order has them; empty strings are sent as
absent rather than as "" so the platform never stores a blank where it expects nothing.
Money goes out as JSON numbers (the contract's examples), from 2-decimal Decimals.

The body is built from a *reader* of field values (``Get``): a model instance's
attributes (``order_payload``) or a row of ``values()`` (``order_payload_of``). The push
claims 50 orders at a time and reads them as rows: building ``Order`` and ``OrderLine``
instances was about half of the claim's CPU (P1 profile), for fields read once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Any

from marketplace.orders.models import Order, OrderLine
from marketplace.platform.dates import to_wire

Get = Callable[[str], Any]

# Wire name → the order's column, for the contract's two nested objects.
CUSTOMER_COLUMNS = {
    "full_name": "customer_full_name",
    "email": "customer_email",
    "phone": "customer_phone",
    "vat": "customer_vat",
}
ADDRESS_COLUMNS = {
    "full_name": "ship_full_name",
    "address1": "ship_address1",
    "address2": "ship_address2",
    "address3": "ship_address3",
    "city": "ship_city",
    "state": "ship_state",
    "postal_code": "ship_postal_code",
    "country_code": "ship_country_code",
    "country_code_iso2": "ship_country_code_iso2",
    "address_type": "ship_address_type",
    "phone": "ship_phone",
}
OPTIONAL_COLUMNS = (
    "location",
    "delivery_notes",
    "earliest_ship_date",
    "latest_ship_date",
    "earliest_delivery_date",
    "latest_delivery_date",
)
# What ``order_payload_of`` reads: select these (``values(*ORDER_COLUMNS)``) to build it.
ORDER_COLUMNS = (
    "mp_order_number",
    "sales_channel",
    "purchase_date",
    "currency",
    "state",
    *CUSTOMER_COLUMNS.values(),
    *ADDRESS_COLUMNS.values(),
    *OPTIONAL_COLUMNS,
)
LINE_COLUMNS = (
    "mp_line_number",
    "sku",
    "product_name",
    "quantity",
    "unit_price",
    "shipping_price",
    "taxes",
    "discounts",
    "shipping_method",
)


def _number(value: Decimal | str | int | float) -> float:
    return float(Decimal(str(value)))


def _compact(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value not in (None, "")}


def _line_payload(get: Get) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "mp_line_number": get("mp_line_number"),
        "sku": get("sku"),
        "product_name": get("product_name"),
        "quantity": get("quantity"),
        "unit_price": _number(get("unit_price")),
        "shipping_price": _number(get("shipping_price")),
        "taxes": [{"type": t["type"], "amount": _number(t["amount"])} for t in get("taxes")],
        "discounts": [
            {"name": d["name"], "amount": _number(d["amount"]), "type": d["type"]}
            for d in get("discounts")
        ],
    }
    if shipping_method := get("shipping_method"):
        payload["shipping_method"] = shipping_method
    return payload


def _object(get: Get, columns: dict[str, str]) -> dict[str, str]:
    return {name: get(column) for name, column in columns.items()}


def order_customer(order: Order) -> dict[str, str]:
    """The contract's ``customer`` object, every field (empty ones included)."""
    return _object(partial(getattr, order), CUSTOMER_COLUMNS)


def order_shipping_address(order: Order) -> dict[str, str]:
    """The contract's ``shipping_address`` object, every field (empty ones included)."""
    return _object(partial(getattr, order), ADDRESS_COLUMNS)


def order_payload_of(get: Get, lines: Iterable[Get]) -> dict[str, Any]:
    """The full order body, with every required contract field, from a reader of the
    order's ``ORDER_COLUMNS`` and one of each line's ``LINE_COLUMNS`` (in line order)."""
    payload: dict[str, Any] = {
        "mp_order_number": get("mp_order_number"),
        "sales_channel": get("sales_channel"),
        "customer": _compact(_object(get, CUSTOMER_COLUMNS)),
        "purchase_date": to_wire(get("purchase_date")),
        "currency": get("currency"),
        "shipping_address": _compact(_object(get, ADDRESS_COLUMNS)),
        "order_lines": [_line_payload(line) for line in lines],
        "marketplace_state": get("state"),
    }
    for key in OPTIONAL_COLUMNS:
        value = get(key)
        if value not in (None, ""):
            payload[key] = to_wire(value) if isinstance(value, datetime) else value
    return payload


def order_payload(order: Order, *, lines: list[OrderLine] | None = None) -> dict[str, Any]:
    """The full order body of a model instance (its lines read unless given)."""
    lines = list(order.lines.all()) if lines is None else lines
    return order_payload_of(partial(getattr, order), [partial(getattr, line) for line in lines])
