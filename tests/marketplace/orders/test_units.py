"""Payload builder, 429 header parsing and the rate budget."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import pytest

from marketplace.orders.payloads import order_payload
from tests.marketplace.conftest import make_order

REQUIRED = {
    "mp_order_number",
    "sales_channel",
    "customer",
    "purchase_date",
    "currency",
    "shipping_address",
    "order_lines",
    "marketplace_state",
}


@pytest.mark.django_db
def test_payload_has_every_required_field_and_the_optional_ones_present(seller: Any) -> None:
    order = make_order("MP-PAY-1")
    payload = order_payload(order)
    assert set(payload) >= REQUIRED
    assert payload["marketplace_state"] == "AWAITING_SHIPMENT"
    wire = "%Y-%m-%dT%H:%M:%SZ"
    assert payload["purchase_date"] == order.purchase_date.astimezone(UTC).strftime(wire)
    assert payload["customer"] == {
        "full_name": "Ada Lovelace",
        "email": "ada@example.com",
        "phone": "+44 20 7946 0000",
        "vat": "GB123456789",
    }
    assert payload["shipping_address"]["country_code"] == "GBR"
    assert "address3" not in payload["shipping_address"]  # absent, not ""
    assert payload["location"] == "warehouse-1"
    assert payload["delivery_notes"] == "Leave with the porter"
    assert order.earliest_ship_date is not None
    assert payload["earliest_ship_date"] == order.earliest_ship_date.astimezone(UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    assert "earliest_delivery_date" not in payload
    first, second = payload["order_lines"]
    assert first == {
        "mp_line_number": "1",
        "sku": "SKU-RED",
        "product_name": "Red mug",
        "quantity": 3,
        "unit_price": 12.5,
        "shipping_method": "standard",
        "shipping_price": 4.0,
        "taxes": [{"type": "VAT", "amount": 2.5}],
        "discounts": [{"name": "spring", "amount": 1.0, "type": "fixed"}],
    }
    assert second["unit_price"] == 9.99
    assert "shipping_method" not in second


@pytest.mark.django_db
def test_payload_without_optional_fields_leaves_them_out(seller: Any) -> None:
    order = make_order(
        "MP-PAY-2",
        location=None,
        delivery_notes=None,
        earliest_ship_date=None,
        latest_ship_date=None,
    )
    payload = order_payload(order)
    for key in ("location", "delivery_notes", "earliest_ship_date", "latest_ship_date"):
        assert key not in payload
