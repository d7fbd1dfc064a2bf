"""What the v2 API answers: the contract's order, fulfillment and cancellation fields only."""

from typing import Any

from sandbox.orders_v2.dates import rfc3339
from sandbox.orders_v2.fulfillment_kinds import fulfillment_type_of
from sandbox.orders_v2.models import Cancellation, Package, V2Order
from sandbox.records.orders.contract_fields import (
    ADDRESS_FIELDS,
    CUSTOMER_FIELDS,
    DISCOUNT_FIELDS,
    TAX_FIELDS,
)

WINDOWS = (
    "earliest_ship_date",
    "latest_ship_date",
    "earliest_delivery_date",
    "latest_delivery_date",
)


def _pick(data: object, names: tuple[str, ...]) -> object:
    if not isinstance(data, dict):
        return data
    return {name: data.get(name) for name in names}


def _pick_list(items: object, names: tuple[str, ...]) -> object:
    return [_pick(item, names) for item in items] if isinstance(items, list) else items


def order_json(order: V2Order) -> dict[str, Any]:
    placed = order.order.placed
    placed_lines = placed.get("order_lines", [])
    lines = []
    for line, placed_line in zip(order.lines, placed_lines, strict=False):
        lines.append(
            {
                "id": line["id"],
                "marketplace_line_number": line["mp_line_number"],
                "sku": placed_line.get("sku"),
                "product_name": placed_line.get("product_name"),
                "quantity": line["quantity"],
                "unit_price": placed_line.get("unit_price"),
                "shipping_method": placed_line.get("shipping_method"),
                "shipping_price": placed_line.get("shipping_price"),
                "taxes": _pick_list(placed_line.get("taxes") or [], TAX_FIELDS),
                "discounts": _pick_list(placed_line.get("discounts") or [], DISCOUNT_FIELDS),
            }
        )
    return {
        "id": str(order.id),
        "marketplace_order_number": order.order.mp_order_number,
        "customer": _pick(placed.get("customer"), CUSTOMER_FIELDS),
        "imported_date": rfc3339(order.imported_at),
        "purchase_date": placed.get("purchase_date"),
        "currency": placed.get("currency"),
        "shipping_address": _pick(placed.get("shipping_address"), ADDRESS_FIELDS),
        "order_lines": lines,
        "marketplace_state": order.normalized_marketplace_state,
        "normalized_marketplace_state": order.normalized_marketplace_state,
        "merchant_order_number": order.merchant_order_number or None,
        # The reference's further fields: the buyer's order number (the marketplace's),
        # the integration (the marketplace the order came from), the fulfilling location.
        "customer_order_number": order.order.mp_order_number,
        "integration_id": order.order.client.client_id,
        "integration_name": order.order.client.name,
        "location": placed.get("location"),
        "marketplace_name": order.order.client.name,
        "sales_channel": placed.get("sales_channel"),
        "delivery_notes": placed.get("delivery_notes"),
        **{window: placed.get(window) for window in WINDOWS},
    }


def _lines_json(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"line_id": line["line_id"], "quantity": line["quantity"]} for line in lines]


def package_json(package: Package) -> dict[str, Any]:
    kind = fulfillment_type_of(package)
    detail: dict[str, Any]
    if kind == "shipment":
        detail = {
            "shipped_date": package.shipped_date,
            "carrier": package.carrier,
            "tracking_number": package.tracking_number,
            "tracking_url": package.tracking_url or None,
        }
    elif kind == "local_delivery":
        detail = {"delivered_date": package.shipped_date, "carrier": package.carrier}
    else:
        detail = {"picked_up_date": package.shipped_date}
    return {
        "id": str(package.id),
        "fulfillment_type": kind,
        "fulfillment_lines": _lines_json(package.lines),
        kind: detail,
        "state": "shipped",
    }


def cancellation_json(cancellation: Cancellation) -> dict[str, Any]:
    return {
        "id": str(cancellation.id),
        "cancellation_lines": _lines_json(cancellation.lines),
        "reason": cancellation.reason,
    }
