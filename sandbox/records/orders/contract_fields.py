"""The field names the contract gives an order (order-source-contract.md), and the
projection of a placed body onto them.

The sandbox keeps whatever a marketplace PUT (unknown fields included) but answers with
the contract's fields only: anything more would become a silent dependency of the client.
"""

from typing import Any

ORDER_FIELDS = (
    "mp_order_number",
    "sales_channel",
    "customer",
    "purchase_date",
    "currency",
    "shipping_address",
    "order_lines",
    "marketplace_state",
    "location",
    "delivery_notes",
    "earliest_ship_date",
    "latest_ship_date",
    "earliest_delivery_date",
    "latest_delivery_date",
)
CUSTOMER_FIELDS = ("full_name", "email", "phone", "vat")
ADDRESS_FIELDS = (
    "full_name",
    "address1",
    "address2",
    "address3",
    "city",
    "state",
    "postal_code",
    "country_code",
    "country_code_iso2",
    "address_type",
    "phone",
)
LINE_FIELDS = (
    "mp_line_number",
    "sku",
    "product_name",
    "quantity",
    "unit_price",
    "shipping_method",
    "shipping_price",
    "taxes",
    "discounts",
)
TAX_FIELDS = ("type", "amount")
DISCOUNT_FIELDS = ("name", "amount", "type")

# A return line's fields (returns-refunds-contract.md), in the order the v1 views show them;
# the last two are optional.
RETURN_LINE_KEYS = (
    "mp_return_line_number",
    "mp_order_line_number",
    "sku",
    "quantity",
    "currency",
    "requested_refund_principal",
    "requested_refund_tax",
    "reason",
    "preauthorized",
    "product_name",
    "unit_price",
    "tax",
    "carrier",
    "tracking_number",
)


def _pick(data: Any, names: tuple[str, ...]) -> Any:
    if not isinstance(data, dict):
        return data
    return {name: data[name] for name in names if name in data}


def _line(line: Any) -> Any:
    picked = _pick(line, LINE_FIELDS)
    if not isinstance(picked, dict):
        return picked
    for key, names in (("taxes", TAX_FIELDS), ("discounts", DISCOUNT_FIELDS)):
        if isinstance(picked.get(key), list):
            picked[key] = [_pick(item, names) for item in picked[key]]
    return picked


def placed_contract_fields(placed: dict) -> dict:
    """The placed order as the contract names it (``location`` is passed through whole:
    the contract gives it no shape)."""
    order = _pick(placed, ORDER_FIELDS)
    if "customer" in order:
        order["customer"] = _pick(order["customer"], CUSTOMER_FIELDS)
    if "shipping_address" in order:
        order["shipping_address"] = _pick(order["shipping_address"], ADDRESS_FIELDS)
    if isinstance(order.get("order_lines"), list):
        order["order_lines"] = [_line(line) for line in order["order_lines"]]
    return order
