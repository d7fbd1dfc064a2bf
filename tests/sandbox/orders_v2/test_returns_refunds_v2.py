"""The seller's side of returns and refunds over real HTTP (order API v2): refunds on an
order (over-refunds accepted), the returns list and its filters, the operations and their
state rules, and what the marketplace then reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
from tests.support.sandbox_process import SandboxProcess


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


V2_RETURN_KEYS = {
    "id", "order_id", "marketplace_order_number", "marketplace_return_number",
    "marketplace_state", "normalized_marketplace_state", "marketplace_state_changed_date",
    "imported_date", "request_date", "respond_by_date", "rma", "notes", "return_type",
    "customer_email", "shipping_address", "return_lines", "refund",
}  # fmt: skip
V2_RETURN_LINE_KEYS = {
    "id", "marketplace_return_line_number", "marketplace_order_line_number",
    "feedamp_order_line_id", "sku", "product_name", "quantity", "currency", "unit_price", "tax",
    "requested_refund", "reason", "preauthorized", "carrier", "tracking_number",
}  # fmt: skip


def test_a_return_as_v2_shows_it(alice: Api, seller: SellerApi, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "V2R-2")
    assert put_return(alice, "V2R-2", "A", return_body()).status_code == 200
    _, line_ids = _order_id(seller, "V2R-2")
    (row,) = seller.ok("GET", "/returns")["returns"]
    assert set(row) == V2_RETURN_KEYS
    assert row["marketplace_return_number"] == "A"
    assert row["marketplace_state"] == "AWAITING_AUTHORIZATION"
    assert row["normalized_marketplace_state"] == "PENDING_AUTHORIZATION"
    assert row["request_date"] == "2024-05-10T00:00:00Z"
    assert row["respond_by_date"] == "2024-05-24T00:00:00Z"
    assert row["refund"] is None
    (line,) = row["return_lines"]
    assert set(line) == V2_RETURN_LINE_KEYS
    assert line["id"].isdigit()
    assert line["marketplace_return_line_number"] == "R1"
    assert line["marketplace_order_line_number"] == "1"
    assert line["feedamp_order_line_id"] == line_ids[0]
    assert line["requested_refund"] == 13.33  # 12.50 principal + 0.83 tax
    assert seller.ok("GET", f"/returns/{row['id']}") == row


def _refund_body(row: dict, **line: object) -> dict:
    return {
        "merchant_refund_lines": [
            {"feedamp_return_line_id": row["return_lines"][0]["id"], **line},
        ]
    }


def test_returns_list_filters_and_operations(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "V2R-3")
    shipped_order(alice, sandbox, "V2R-4")
    assert put_return(alice, "V2R-3", "A", return_body()).status_code == 200
    assert put_return(alice, "V2R-4", "B", return_body()).status_code == 200
    listed = seller.ok("GET", "/returns")
    assert [r["marketplace_return_number"] for r in listed["returns"]] == ["A", "B"]
    assert listed["next_cursor"] is None
    order_id, _ = _order_id(seller, "V2R-3")
    (only,) = seller.ok("GET", "/returns", params={"order_id": order_id})["returns"]
    assert only["order_id"] == order_id
    page = seller.ok("GET", "/returns", params={"limit": "1"})
    nxt = seller.ok("GET", "/returns", params={"cursor": page["next_cursor"]})
    assert [r["marketplace_return_number"] for r in nxt["returns"]] == ["B"]
    op = f"/returns/{only['id']}/run-operation"
    refund = f"/returns/{only['id']}/refunds"
    # Not preauthorized: no refund before authorization; no refund operation at all.
    early = seller.call("POST", refund, json=_refund_body(only, item_refund=99))
    assert early.status_code == 409
    assert seller.call("POST", op, params={"op": "refund"}, json={}).status_code == 400
    authorized = seller.ok("POST", op, params={"op": "authorize"}, json={"rma": "RMA-9"})
    assert authorized["marketplace_state"] == "AUTHORIZED"
    assert authorized["normalized_marketplace_state"] == "PENDING_CONFIRMATION"
    assert authorized["rma"] == "RMA-9"
    assert seller.call("POST", op, params={"op": "authorize"}, json={"rma": "X"}).status_code == 409
    body = _refund_body(only, item_refund=99, shipping_refund="1.50", refund_notes="as asked")
    made = seller.ok("POST", refund, status=201, json=body)
    assert made == {
        "id": only["id"],
        "merchant_refund_lines": [
            {
                "feedamp_return_line_id": only["return_lines"][0]["id"],
                "item_refund": 99,
                "shipping_refund": 1.5,
                "refund_notes": "as asked",
                "merchant_full_refund": False,
            }
        ],
    }
    assert seller.call("POST", refund, json=body).status_code == 409  # once
    refunded = seller.ok("GET", f"/returns/{only['id']}")
    assert refunded["marketplace_state"] == "REFUNDED"
    assert refunded["refund"] == made
    states = {"marketplace_state": "REFUNDED"}
    assert [r["id"] for r in seller.ok("GET", "/returns", params=states)["returns"]] == [only["id"]]
    normalized = {"normalized_marketplace_state": "PENDING_AUTHORIZATION"}
    waiting = seller.ok("GET", "/returns", params=normalized)["returns"]
    assert [r["marketplace_return_number"] for r in waiting] == ["B"]
    v1 = alice.call("GET", "/orders/V2R-3/returns/A/refunds").json()
    assert v1["status"] == "REFUNDED"
    assert v1["rma"] == "RMA-9"
    assert v1["merchant_refund_lines"] == [
        {
            "mp_return_line_number": "R1",
            "principal_refund_amount": 99,
            "shipping_refund_amount": 1.5,
        }
    ]


def test_reject_is_reading_b_only(alice: Api, seller: SellerApi, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "V2R-9")
    assert put_return(alice, "V2R-9", "A", return_body()).ok
    (row,) = seller.ok("GET", "/returns")["returns"]
    op = f"/returns/{row['id']}/run-operation"
    refused = seller.call("POST", op, params={"op": "reject"}, json={"reason": "worn"})
    assert refused.status_code == 409
    assert "AWAITING_AUTHORIZATION" in refused.json()["message"]
    for bad in ({"marketplace_state": "REJECTED"}, {"normalized_marketplace_state": "REJECTED"}):
        assert seller.call("GET", "/returns", params=bad).status_code == 400
    sandbox.readings(return_refusal="B")
    rejected = seller.ok("POST", op, params={"op": "reject"}, json={"reason": "worn"})
    assert rejected["marketplace_state"] == "REJECTED"
    assert rejected["notes"] == "worn"
    assert alice.call("GET", "/orders/V2R-9/returns/A").json()["notes"] == "worn"
    found = seller.ok("GET", "/returns", params={"marketplace_state": "REJECTED"})["returns"]
    assert [r["id"] for r in found] == [row["id"]]


def _plus_second(moment: str) -> str:
    later = datetime.fromisoformat(moment.replace("Z", "+00:00")) + timedelta(seconds=1)
    return later.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_state_and_import_time_filters(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "V2R-10")
    assert put_return(alice, "V2R-10", "A", return_body()).ok
    (row,) = seller.ok("GET", "/returns")["returns"]
    imported = row["imported_date"]
    sandbox.shift_clock(5)
    authorized = sandbox.control("POST", "/orders/V2R-10/returns/A/authorize", {})
    (row,) = seller.ok("GET", "/returns")["returns"]
    changed = row["marketplace_state_changed_date"]
    assert changed > imported
    assert authorized["status"] == "AUTHORIZED"

    def ids(**params: str) -> list[str]:
        return [r["id"] for r in seller.ok("GET", "/returns", params=params)["returns"]]

    # The answers' times are whole seconds; the records' are not: a second later than the
    # one shown is after the record, the one shown is before it.
    assert ids(imported_after=imported) == [row["id"]]
    assert ids(imported_after=_plus_second(imported)) == []
    assert ids(imported_before=_plus_second(imported)) == [row["id"]]
    assert ids(imported_before=imported) == []
    assert ids(marketplace_state_changed_after=_plus_second(imported)) == [row["id"]]
    assert ids(marketplace_state_changed_after=_plus_second(changed)) == []
    assert ids(marketplace_state_changed_before=changed) == []
    assert ids(marketplace_state_changed_before=_plus_second(changed)) == [row["id"]]
    for bad in ("2024-01-01T00:00:00.5Z", "2024-01-01", "2024-01-01T00:00:00"):
        assert seller.call("GET", "/returns", params={"imported_after": bad}).status_code == 400


def test_all_preauthorized_returns_refund_straight_away_in_full(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "V2R-5")
    body = return_body(return_line(preauthorized=True))
    assert put_return(alice, "V2R-5", "P", body).status_code == 200
    (row,) = seller.ok("GET", "/returns")["returns"]
    made = seller.ok(
        "POST",
        f"/returns/{row['id']}/refunds",
        status=201,
        json=_refund_body(row, merchant_full_refund=True),
    )
    assert made["merchant_refund_lines"][0]["item_refund"] == 13.33
    assert made["merchant_refund_lines"][0]["shipping_refund"] == 0
    assert seller.ok("GET", f"/returns/{row['id']}")["rma"] is None


@pytest.mark.parametrize(
    ("params", "body", "field"),
    [
        ({}, {"rma": "x"}, "op"),
        ({"op": "ship"}, {}, "op"),
        ({"op": "refund"}, {}, "op"),
        ({"op": "authorize"}, {"rma": ""}, "rma"),
        ({"op": "authorize"}, {"rma": "x", "note": "y"}, "note"),
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


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ({}, "merchant_refund_lines[0].item_refund"),
        ({"item_refund": -1}, "merchant_refund_lines[0].item_refund"),
        ({"item_refund": 1, "merchant_full_refund": "yes"}, ".merchant_full_refund"),
        ({"item_refund": 1, "principal_refund_amount": 1}, ".principal_refund_amount"),
        ({"item_refund": 1, "feedamp_return_line_id": "9"}, ".feedamp_return_line_id"),
    ],
)
def test_bad_return_refunds_are_400(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, line: dict, field: str
) -> None:
    shipped_order(alice, sandbox, "V2R-11")
    assert put_return(alice, "V2R-11", "A", return_body(return_line(preauthorized=True))).ok
    (row,) = seller.ok("GET", "/returns")["returns"]
    response = seller.call("POST", f"/returns/{row['id']}/refunds", json=_refund_body(row, **line))
    assert response.status_code == 400, response.text
    assert any(field in key for key in response.json()["fields"]), response.text
    assert seller.ok("GET", f"/returns/{row['id']}")["marketplace_state"] == (
        "AWAITING_AUTHORIZATION"
    )
    empty = seller.call("POST", f"/returns/{row['id']}/refunds", json={"merchant_refund_lines": []})
    assert empty.status_code == 400


def test_returns_query_is_strict_and_scoped(
    alice: Api, bob: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    for params in (
        {"marketplace_state": "OPEN"},
        {"status": "AUTHORIZED"},
        {"updated_after": "2024-01-01T00:00:00Z"},
        {"marketplace_state_changed_after": "2024-01-01T00:00:00.5Z"},
        {"x": "1"},
    ):
        assert seller.call("GET", "/returns", params=params).status_code == 400
    shipped_order(alice, sandbox, "V2R-7")
    assert put_return(alice, "V2R-7", "A", return_body()).ok
    (row,) = seller.ok("GET", "/returns")["returns"]
    bobs = seller_api(sandbox, "bob", "515151")
    assert bobs.ok("GET", "/returns") == {"returns": [], "next_cursor": None}
    assert bobs.call("GET", f"/returns/{row['id']}").status_code == 404
    assert bobs.call("POST", f"/returns/{row['id']}/refunds", json={}).status_code == 404
    assert seller.ok("GET", f"/returns/{row['id']}") == row


def test_v2_refunds_list_key_reading(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "V2R-12")
    order_id, line_ids = _order_id(seller, "V2R-12")
    body = {"refund_lines": [refund_line(line_ids[0])]}
    made = seller.ok("POST", f"/orders/{order_id}/refunds", status=201, json=body)
    assert seller.ok("GET", f"/orders/{order_id}/refunds") == {"refunds": [made]}
    sandbox.readings(v2_refunds_key="B")
    assert seller.ok("GET", f"/orders/{order_id}/refunds") == {"cancellations": [made]}


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
