"""Answers carry only the fields the contract names; the additive-fields switch adds more.

The key lists below are copied from ``../shared/spec/order-source-contract.md`` (relative
to the repository: ``SPEC``), not from the sandbox's code, so a field the sandbox invents
shows up here as a failure.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.conftest import Api, order_body
from tests.support.sandbox_process import SandboxProcess

ORDER_PLACED = {
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
}
ORDER_ADDED = {"fulfillments", "acknowledged", "status", "is_marketplace_fulfilled"}
CUSTOMER = {"full_name", "email", "phone", "vat"}
ADDRESS = {
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
}
LINE = {
    "mp_line_number",
    "sku",
    "product_name",
    "quantity",
    "unit_price",
    "shipping_method",
    "shipping_price",
    "taxes",
    "discounts",
}
TAX = {"type", "amount"}
DISCOUNT = {"name", "amount", "type"}
LISTING = {"orders", "next_cursor"}
FULFILLMENTS = {"status", "is_marketplace_fulfilled", "fulfillments"}
FULFILLMENT_LINE = {"mp_line_number", "status", "pending", "shipments", "cancellations"}
PENDING = {"quantity"}
SHIPMENT = {"quantity", "carrier", "tracking_number", "shipped_date", "tracking_url"}
CANCELLATION = {"quantity", "reason"}
NOTE = "x_sandbox_note"

SPEC = Path(__file__).resolve().parents[3] / ".." / "shared" / "spec" / "order-source-contract.md"


def test_every_key_listed_here_is_named_by_the_contract() -> None:
    if not SPEC.exists():
        pytest.skip(f"the contract is not next to this checkout ({SPEC})")
    spec_words = set(re.findall(r"[a-z0-9_]+", SPEC.read_text()))
    listed = (
        (ORDER_PLACED | ORDER_ADDED | CUSTOMER | ADDRESS | LINE | TAX | DISCOUNT | LISTING)
        | FULFILLMENTS
        | FULFILLMENT_LINE
        | PENDING
        | SHIPMENT
        | CANCELLATION
    )

    assert listed - spec_words == set()


def _extras(data: dict, allowed: set[str]) -> set[str]:
    return set(data) - allowed


def _fulfillment_line_extras(line: dict) -> set[str]:
    extras = _extras(line, FULFILLMENT_LINE) | _extras(line["pending"], PENDING)
    for shipment in line["shipments"]:
        extras |= _extras(shipment, SHIPMENT)
    for cancellation in line["cancellations"]:
        extras |= _extras(cancellation, CANCELLATION)
    return extras


def _order_extras(order: dict) -> set[str]:
    extras = _extras(order, ORDER_PLACED | ORDER_ADDED)
    extras |= _extras(order["customer"], CUSTOMER) | _extras(order["shipping_address"], ADDRESS)
    for line in order["order_lines"]:
        extras |= _extras(line, LINE)
        for tax in line.get("taxes") or []:
            extras |= _extras(tax, TAX)
        for discount in line.get("discounts") or []:
            extras |= _extras(discount, DISCOUNT)
    for line in order["fulfillments"]:
        extras |= _fulfillment_line_extras(line)
    return extras


def _shipped_and_cancelled_order(alice: Api, sandbox: SandboxProcess, number: str) -> dict:
    """An order with a shipment and a cancellation, placed with fields the contract lacks."""
    body = order_body(number, gift_wrap=True)
    body["customer"]["loyalty_tier"] = "gold"
    body["shipping_address"]["door_code"] = "1234"
    body["order_lines"][0]["colour"] = "red"
    body["order_lines"][0]["taxes"][0]["rate"] = "20%"
    put = alice.put_order(body)
    assert put.status_code == 201, put.text
    sandbox.ship(number, lines=[{"mp_line_number": "1", "quantity": 2}])
    sandbox.cancel(number, lines=[{"mp_line_number": "1", "quantity": 1}])
    return put.json()


def test_default_answers_carry_only_contract_fields(alice: Api, sandbox: SandboxProcess) -> None:
    put_answer = _shipped_and_cancelled_order(alice, sandbox, "CF-1")
    assert _order_extras(put_answer) == set()

    order = alice.call("GET", "/orders/CF-1").json()
    assert _order_extras(order) == set()
    assert {"imported_at", "seller_updated_at"}.isdisjoint(order)
    [line, _] = order["fulfillments"]
    # the shipment and cancellation shapes were really checked
    assert line["shipments"]
    assert line["cancellations"]

    listing = alice.call("GET", "/orders").json()
    assert _extras(listing, LISTING) == set()
    assert [_order_extras(o) for o in listing["orders"]] == [set()]

    fulfillments = alice.call("GET", "/orders/CF-1/fulfillments").json()
    assert _extras(fulfillments, FULFILLMENTS) == set()
    assert [_fulfillment_line_extras(f) for f in fulfillments["fulfillments"]] == [set(), set()]

    report = [{"code": "OTHER", "message": "x"}]
    assert alice.call("POST", "/orders/CF-1/errors", json=report).json() == {}


def _objects(data: Any) -> list[dict]:
    """Every JSON object in ``data``, however deep."""
    if isinstance(data, dict):
        return [data, *(o for value in data.values() for o in _objects(value))]
    if isinstance(data, list):
        return [o for item in data for o in _objects(item)]
    return []


def test_additive_switch_adds_unknown_fields_everywhere(
    alice: Api, sandbox: SandboxProcess
) -> None:
    _shipped_and_cancelled_order(alice, sandbox, "CF-2")
    sandbox.set_additive_fields(True)

    order = alice.call("GET", "/orders/CF-2").json()
    listing = alice.call("GET", "/orders").json()
    fulfillments = alice.call("GET", "/orders/CF-2/fulfillments").json()
    put_answer = alice.put_order(order_body("CF-3")).json()
    report = [{"code": "OTHER", "message": "x"}]
    error_answer = alice.call("POST", "/orders/CF-2/errors", json=report)
    not_found = alice.call("GET", "/orders/NOPE").json()

    for answer in (order, listing, fulfillments, put_answer, error_answer.json(), not_found):
        assert all(NOTE in obj for obj in _objects(answer)), answer
    # objects inside an order: customer, address, lines, taxes, fulfillment lines, shipments
    assert len(_objects(order)) >= 10
    for listed in [order, put_answer, *listing["orders"]]:
        assert {"imported_at", "seller_updated_at"} <= set(listed)
    assert order["seller_updated_at"] is not None
    assert put_answer["seller_updated_at"] is None


def test_reset_turns_the_additive_switch_off(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_additive_fields(True)
    assert NOTE in alice.call("GET", "/orders").json()
    sandbox.reset(keep_accounts=True)
    assert sandbox.state()["additive_fields"] is False
    answer = alice.call("GET", "/orders")  # reset dropped the token: a 401, plain again
    assert answer.status_code == 401
    assert NOTE not in answer.json()


def test_serve_flag_starts_with_additive_fields() -> None:
    with SandboxProcess(additive_fields=True) as other:
        assert other.state()["additive_fields"] is True
        other.reset()
        assert other.state()["additive_fields"] is True  # reset returns to the flag's value
        other.set_additive_fields(False)
        assert other.state()["additive_fields"] is False
