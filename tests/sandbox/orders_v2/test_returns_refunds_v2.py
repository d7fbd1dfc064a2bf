"""The seller's side of returns and refunds over real HTTP (order API v2): refunds on an
order (over-refunds accepted), the returns list and its filters, the operations and their
state rules, and what the marketplace then reads."""

from __future__ import annotations

import pytest
import requests

from tests.sandbox.conftest import Api
from tests.sandbox.order_source.after_sale_helpers import (
    put_return,
    return_body,
    return_line,
    shipped_order,
)
from tests.sandbox.orders_v2.v2_client import SellerApi, seller_api
from tests.sandbox_process import SandboxProcess


@pytest.fixture
def seller(alice: Api, sandbox: SandboxProcess) -> SellerApi:
    return seller_api(sandbox, "alice")


def _order_id(seller: SellerApi, number: str) -> tuple[str, list[str]]:
    (order,) = seller.orders(marketplace_order_number=number)
    return order["id"], [line["id"] for line in order["order_lines"]]


def refund_line(line_id: str, **overrides: object) -> dict:
    return {
        "feedamp_order_line_id": line_id,
        "refund_reason": "customer_cancelled",
        "refund_quantity": 1,
        "currency": "EUR",
        "item_refund": 12.5,
        "item_tax_refund": 0.83,
        "shipping_refund": 0,
        "shipping_tax_refund": 0,
        "discount_refund": 0,
        "refund_notes": "out of stock after shipping",
        **overrides,
    }


def test_a_refund_is_posted_listed_and_read_by_the_marketplace(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "V2R-1")
    order_id, line_ids = _order_id(seller, "V2R-1")
    body = {
        "cp_refund_number": "CP-1",
        "refund_lines": [refund_line(line_ids[0], item_refund="500.00")],  # over: accepted
    }
    made = seller.ok("POST", f"/orders/{order_id}/refunds", status=201, json=body)
    assert made["cp_refund_number"] == "CP-1"
    assert made["refund_lines"][0]["refund_line_number"] == 1
    assert made["refund_lines"][0]["item_refund"] == 500
    assert seller.ok("GET", f"/orders/{order_id}/refunds") == {"refunds": [made]}
    assert seller.ok("GET", f"/orders/{order_id}/refunds/{made['id']}") == made
    assert seller.call("GET", f"/orders/{order_id}/refunds/99999").status_code == 404
    (seen,) = alice.call("GET", "/refunds").json()["refunds"]
    assert seen["feedamp_refund_id"] == int(made["id"])
    assert seen["merchant_refund_lines"][0]["mp_line_number"] == "1"
    assert seen["merchant_refund_lines"][0]["reason"] == "CUSTOMER_CANCELLED"
    assert seen["notes"] == "out of stock after shipping"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"feedamp_order_line_id": "0"}, "refund_lines[0].feedamp_order_line_id"),
        ({"refund_quantity": -1}, "refund_lines[0].refund_quantity"),
        ({"currency": "EURO"}, "refund_lines[0].currency"),
        ({"item_refund": "ten"}, "refund_lines[0].item_refund"),
        ({"refund_reason": None}, "refund_lines[0].refund_reason"),
        # v2 writes reasons in lower case; v1 shows them upper-cased.
        ({"refund_reason": "CUSTOMER_CANCELLED"}, "refund_lines[0].refund_reason"),
        ({"colour": "red"}, "refund_lines[0].colour"),
    ],
)
def test_bad_refund_bodies_are_400(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, change: dict, field: str
) -> None:
    shipped_order(alice, sandbox, "V2R-2")
    order_id, line_ids = _order_id(seller, "V2R-2")
    body = {"refund_lines": [refund_line(line_ids[0], **change)]}
    response = seller.call("POST", f"/orders/{order_id}/refunds", json=body)
    assert response.status_code == 400, response.text
    assert field in response.json()["fields"]
    unknown = seller.call("POST", f"/orders/{order_id}/refunds", json={"refund_lines": [], "x": 1})
    assert set(unknown.json()["fields"]) == {"refund_lines", "x"}


def test_returns_list_filters_and_operations(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "V2R-3")
    shipped_order(alice, sandbox, "V2R-4")
    assert put_return(alice, "V2R-3", "A", return_body()).status_code == 200
    assert put_return(alice, "V2R-4", "B", return_body()).status_code == 200
    listed = seller.ok("GET", "/returns")
    assert [r["mp_return_number"] for r in listed["returns"]] == ["A", "B"]
    assert listed["next_cursor"] is None
    order_id, line_ids = _order_id(seller, "V2R-3")
    (only,) = seller.ok("GET", "/returns", params={"order_id": order_id})["returns"]
    assert only["order_id"] == order_id
    assert only["return_lines"][0]["feedamp_order_line_id"] == line_ids[0]
    assert only["status"] == "AWAITING_AUTHORIZATION"
    page = seller.ok("GET", "/returns", params={"limit": "1"})
    nxt = seller.ok("GET", "/returns", params={"cursor": page["next_cursor"]})
    assert [r["mp_return_number"] for r in nxt["returns"]] == ["B"]
    op = f"/returns/{only['id']}/run-operation"
    # Not preauthorized: no refund before authorization.
    assert seller.call("POST", op, params={"op": "refund"}, json={"lines": []}).status_code == 409
    authorized = seller.ok("POST", op, params={"op": "authorize"}, json={"rma": "RMA-9"})
    assert authorized["status"] == "AUTHORIZED"
    assert authorized["rma"] == "RMA-9"
    assert seller.call("POST", op, params={"op": "authorize"}, json={"rma": "X"}).status_code == 409
    assert seller.call("POST", op, params={"op": "reject"}, json={"reason": "x"}).status_code == 409
    lines = [
        {"mp_return_line_number": "R1", "principal_refund_amount": 99, "shipping_refund_amount": 0}
    ]
    refunded = seller.ok("POST", op, params={"op": "refund"}, json={"lines": lines})
    assert refunded["status"] == "REFUNDED"
    assert refunded["refund_lines"] == lines
    assert (
        seller.call("POST", op, params={"op": "refund"}, json={"lines": lines}).status_code == 409
    )
    by_status = seller.ok("GET", "/returns", params={"status": "REFUNDED"})["returns"]
    assert [r["id"] for r in by_status] == [only["id"]]
    v1 = alice.call("GET", "/orders/V2R-3/returns/A/refunds").json()
    assert v1["status"] == "REFUNDED"
    assert v1["rma"] == "RMA-9"
    assert v1["merchant_refund_lines"][0]["principal_refund_amount"] == 99
    other = seller.ok("GET", "/returns", params={"status": "AWAITING_AUTHORIZATION"})["returns"]
    reject = f"/returns/{other[0]['id']}/run-operation"
    rejected = seller.ok("POST", reject, params={"op": "reject"}, json={"reason": "worn"})
    assert rejected["status"] == "REJECTED"
    assert rejected["notes"] == "worn"
    assert alice.call("GET", "/orders/V2R-4/returns/B").json()["notes"] == "worn"


def test_all_preauthorized_returns_refund_straight_away(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "V2R-5")
    body = return_body(return_line(preauthorized=True))
    assert put_return(alice, "V2R-5", "P", body).status_code == 200
    (row,) = seller.ok("GET", "/returns")["returns"]
    lines = [
        {"mp_return_line_number": "R1", "principal_refund_amount": "1", "shipping_refund_amount": 0}
    ]
    op = f"/returns/{row['id']}/run-operation"
    assert seller.ok("POST", op, params={"op": "refund"}, json={"lines": lines})["rma"] is None


@pytest.mark.parametrize(
    ("params", "body", "field"),
    [
        ({}, {"rma": "x"}, "op"),
        ({"op": "ship"}, {}, "op"),
        ({"op": "authorize"}, {"rma": ""}, "rma"),
        ({"op": "authorize"}, {"rma": "x", "note": "y"}, "note"),
        ({"op": "reject"}, {}, "reason"),
        ({"op": "refund"}, {"lines": [{"mp_return_line_number": "R9"}]}, "lines[0]"),
    ],
)
def test_bad_operations_are_400(
    alice: Api,
    seller: SellerApi,
    sandbox: SandboxProcess,
    params: dict,
    body: dict,
    field: str,
) -> None:
    shipped_order(alice, sandbox, "V2R-6")
    assert put_return(alice, "V2R-6", "A", return_body(return_line(preauthorized=True))).ok
    (row,) = seller.ok("GET", "/returns")["returns"]
    response = seller.call("POST", f"/returns/{row['id']}/run-operation", params=params, json=body)
    assert response.status_code == 400, response.text
    assert any(key.startswith(field) for key in response.json()["fields"])


def test_returns_query_is_strict_and_scoped(
    alice: Api, bob: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    for params in ({"status": "OPEN"}, {"updated_after": "2024-01-01T00:00:00.5Z"}, {"x": "1"}):
        assert seller.call("GET", "/returns", params=params).status_code == 400
    shipped_order(alice, sandbox, "V2R-7")
    assert put_return(alice, "V2R-7", "A", return_body()).ok
    (row,) = seller.ok("GET", "/returns")["returns"]
    bobs = seller_api(sandbox, "bob", "515151")
    assert bobs.ok("GET", "/returns") == {"returns": [], "next_cursor": None}
    assert bobs.call("GET", f"/returns/{row['id']}").status_code == 404
    assert seller.ok("GET", f"/returns/{row['id']}") == row


def test_the_control_api_plays_the_seller_and_refuses_what_the_state_does_not_allow(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "V2R-8")
    assert put_return(alice, "V2R-8", "A", return_body()).ok
    control = sandbox.control_url + "/orders/V2R-8/returns/A"
    early = seller.http.post(control + "/refund", json={}, timeout=10)
    assert early.status_code == 409
    assert early.json()["error"] == "conflict"
    assert seller.http.post(control + "/fly", json={}, timeout=10).status_code == 400
    missing = seller.http.post(sandbox.control_url + "/orders/V2R-8/returns/Z/reject", timeout=10)
    assert missing.status_code == 404
    authorized = sandbox.control("POST", "/orders/V2R-8/returns/A/authorize", {})
    assert authorized["rma"].startswith("RMA-")
    assert authorized["read_in_state"] is False
    refunded = sandbox.control("POST", "/orders/V2R-8/returns/A/refund", {})
    assert refunded["merchant_refund_lines"][0]["principal_refund_amount"] == 13.33
    bad = seller.http.post(
        sandbox.control_url + "/orders/V2R-8/refunds",
        json={"refund_lines": [{"mp_line_number": "9"}]},
        timeout=10,
    )
    assert bad.status_code == 400
    assert "feedamp_order_line_id" in bad.text
    events = sandbox.v2_order("V2R-8")["events"]
    kinds = [e["kind"] for e in events]
    assert "return_authorized" in kinds
    assert "return_refunded" in kinds


def test_simulator_settings_take_the_after_sale_rates(alice: Api, sandbox: SandboxProcess) -> None:
    saved = sandbox.set_simulator("alice", return_reject_rate=1, seller_refund_rate=0.5)
    assert saved["return_reject_rate"] == 1.0
    assert saved["seller_refund_rate"] == 0.5
    response = requests.post(
        sandbox.control_url + "/v2/sellers/alice/simulator",
        json={"over_refund_rate": 2},
        timeout=10,
    )
    assert response.status_code == 400
