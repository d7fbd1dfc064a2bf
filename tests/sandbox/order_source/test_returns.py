"""Returns on the marketplace-facing interface over real HTTP: create (and its repeats,
conflicts and refusals), the views, the listing's filters and cursor, complete and errors,
and the violations they count."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
import requests

from tests.sandbox.conftest import Api, order_body
from tests.sandbox.order_source.after_sale_helpers import (
    put_return,
    return_body,
    return_line,
    seller_op,
    shipped_order,
)
from tests.support.sandbox_process import SandboxError, SandboxProcess

RETURN_KEYS = {
    "status", "rma", "mp_return_number", "mp_order_number", "request_date", "respond_date",
    "shipping_address", "customer_email", "return_type", "return_lines", "notes",
}  # fmt: skip


def kinds(sandbox: SandboxProcess) -> dict[str, int]:
    return {k: n for k, n in sandbox.violations()["by_kind"].items() if n}


def test_create_answers_the_return_and_a_repeat_changes_nothing(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RT-1")
    body = return_body()
    first = put_return(alice, "RT-1", "RET-1", body)
    assert first.status_code == 200, first.text
    view = first.json()
    assert set(view) == RETURN_KEYS
    assert view["status"] == "AWAITING_AUTHORIZATION"
    assert view["rma"] is None
    assert view["notes"] is None
    assert view["mp_order_number"] == "RT-1"
    assert view["mp_return_number"] == "RET-1"
    assert view["return_lines"][0]["quantity"] == 1
    again = put_return(alice, "RT-1", "RET-1", body)
    assert again.status_code == 200
    assert again.json() == view
    assert alice.call("GET", "/orders/RT-1/returns/RET-1").json() == view
    listed = alice.call("GET", "/orders/RT-1/returns").json()
    assert listed == {"returns": [view], "next_cursor": None}


def test_a_different_body_updates_while_awaiting_and_is_409_after_authorization(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RT-2")
    assert put_return(alice, "RT-2", "RET-1", return_body()).status_code == 200
    changed = return_body(return_line(quantity=2))
    updated = put_return(alice, "RT-2", "RET-1", changed)
    assert updated.status_code == 200
    assert updated.json()["return_lines"][0]["quantity"] == 2
    authorized = seller_op(sandbox, "RT-2", "RET-1", "authorize", rma="RMA-77")
    assert authorized["status"] == "AUTHORIZED"
    assert put_return(alice, "RT-2", "RET-1", changed).status_code == 200  # same: fine
    assert kinds(sandbox) == {}
    refused = put_return(alice, "RT-2", "RET-1", return_body(return_line(quantity=3)))
    assert refused.status_code == 409
    assert refused.json()["error"] == "conflict"
    assert kinds(sandbox) == {"return_changed_after_authorization": 1}
    view = alice.call("GET", "/orders/RT-2/returns/RET-1").json()
    assert view["rma"] == "RMA-77"
    assert view["return_lines"][0]["quantity"] == 2


def test_over_return_is_400_naming_the_line(alice: Api, sandbox: SandboxProcess) -> None:
    assert alice.put_order(order_body("RT-3")).status_code == 201
    sandbox.ship("RT-3", lines=[{"mp_line_number": "1", "quantity": 2}])
    too_many = put_return(alice, "RT-3", "RET-1", return_body(return_line(quantity=3)))
    assert too_many.status_code == 400
    assert "return_lines[0].quantity" in too_many.json()["fields"]
    assert (
        put_return(alice, "RT-3", "RET-1", return_body(return_line(quantity=2))).status_code == 200
    )
    # Earlier returns take their units: nothing of line 1 is left.
    second = put_return(alice, "RT-3", "RET-2", return_body(return_line(quantity=1)))
    assert second.status_code == 400
    assert "line 1" in second.json()["fields"]["return_lines[0].quantity"]
    # Two lines of one return on the same order line count together.
    both = return_body(
        return_line(quantity=1),
        return_line(mp_return_line_number="R2", mp_order_line_number="2", sku="SKU-BLUE",
                    unit_price=9.99, quantity=1),
    )  # fmt: skip
    unshipped = put_return(alice, "RT-3", "RET-3", both)
    assert unshipped.status_code == 400  # line 2 was never shipped


def test_a_refusal_under_reading_a_leaves_the_return_awaiting_authorization(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RT-4")
    assert put_return(alice, "RT-4", "A", return_body(return_line(quantity=3))).status_code == 200
    with pytest.raises(SandboxError, match="409") as refused:
        seller_op(sandbox, "RT-4", "A", "reject", reason="opened and used")
    assert "AWAITING_AUTHORIZATION" in str(refused.value)
    view = alice.call("GET", "/orders/RT-4/returns/A").json()
    assert (view["status"], view["notes"]) == ("AWAITING_AUTHORIZATION", None)
    # The four published states only: asking for REJECTED is a 400 and a violation.
    asked = alice.call("GET", "/returns", params={"status": "AWAITING_AUTHORIZATION,REJECTED"})
    assert asked.status_code == 400
    assert "status" in asked.json()["fields"]
    assert kinds(sandbox) == {"after_sale_query": 1}


def test_a_rejected_return_under_reading_b_gives_its_units_back(
    alice: Api, sandbox: SandboxProcess
) -> None:
    sandbox.readings(return_refusal="B")
    shipped_order(alice, sandbox, "RT-4")
    assert put_return(alice, "RT-4", "A", return_body(return_line(quantity=3))).status_code == 200
    assert put_return(alice, "RT-4", "B", return_body(return_line(quantity=1))).status_code == 400
    rejected = seller_op(sandbox, "RT-4", "A", "reject", reason="opened and used")
    assert rejected["status"] == "REJECTED"
    view = alice.call("GET", "/orders/RT-4/returns/A").json()
    assert view["status"] == "REJECTED"
    assert view["notes"] == "opened and used"
    assert put_return(alice, "RT-4", "B", return_body(return_line(quantity=1))).status_code == 200
    listed = alice.call("GET", "/returns", params={"status": "REJECTED"})
    assert listed.status_code == 200
    assert [r["mp_return_number"] for r in listed.json()["returns"]] == ["A"]
    assert kinds(sandbox) == {}


def test_the_body_carries_the_order_number(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RT-20")
    missing = put_return(alice, "RT-20", "A", return_body(mp_order_number=None))
    assert missing.status_code == 400
    assert "mp_order_number" in missing.json()["fields"]
    assert kinds(sandbox) == {"return_without_order_number": 1}
    other = put_return(alice, "RT-20", "A", return_body(mp_order_number="RT-21"))
    assert other.status_code == 400
    assert "path" in other.json()["fields"]["mp_order_number"]
    assert kinds(sandbox) == {"return_without_order_number": 2}
    made = put_return(alice, "RT-20", "A", return_body())
    assert made.status_code == 200
    assert made.json()["mp_order_number"] == "RT-20"
    # Reading B (the reference's example leaves it out): accepted without it.
    sandbox.readings(return_order_number="B")
    assert put_return(alice, "RT-20", "B", return_body(mp_order_number=None)).status_code == 200
    assert put_return(alice, "RT-20", "C", return_body(mp_order_number="X")).status_code == 400
    assert kinds(sandbox) == {"return_without_order_number": 3}


@pytest.mark.parametrize(
    ("return_type", "status"), [("SHIP", 200), ("NO_RETURN", 200), ("IN_STORE", 400)]
)
def test_return_types(alice: Api, sandbox: SandboxProcess, return_type: str, status: int) -> None:
    shipped_order(alice, sandbox, "RT-22")
    answer = put_return(alice, "RT-22", "A", return_body(return_type=return_type))
    assert answer.status_code == status, answer.text
    if status == 200:
        assert answer.json()["return_type"] == return_type
    else:
        assert "return_type" in answer.json()["fields"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"unknown_field": 1}, "unknown_field"),
        ({"return_lines": []}, "return_lines"),
        ({"request_date": "2024-05-10T00:00:00+00:00"}, "request_date"),
        ({"respond_date": "2024-13-40"}, "respond_date"),
        ({"return_type": "PICKUP"}, "return_type"),
        ({"customer_email": "nope"}, "customer_email"),
        ({"shipping_address": {"full_name": "A"}}, "shipping_address.address1"),
    ],
)
def test_bad_return_bodies_are_400(
    alice: Api, sandbox: SandboxProcess, change: dict, field: str
) -> None:
    shipped_order(alice, sandbox, "RT-5")
    response = put_return(alice, "RT-5", "RET-1", return_body(**change))
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert field in response.json()["fields"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"quantity": "1"}, "return_lines[0].quantity"),
        ({"quantity": 0}, "return_lines[0].quantity"),
        ({"preauthorized": "yes"}, "return_lines[0].preauthorized"),
        ({"sku": "SKU-GREEN"}, "return_lines[0].sku"),
        ({"currency": "USD"}, "return_lines[0].currency"),
        ({"currency": "XXY"}, "return_lines[0].currency"),
        ({"unit_price": 12.49}, "return_lines[0].unit_price"),
        ({"tax": -1}, "return_lines[0].tax"),
        ({"mp_order_line_number": "9"}, "return_lines[0].mp_order_line_number"),
        ({"colour": "red"}, "return_lines[0].colour"),
    ],
)
def test_bad_return_lines_are_400(
    alice: Api, sandbox: SandboxProcess, change: dict, field: str
) -> None:
    shipped_order(alice, sandbox, "RT-6")
    response = put_return(alice, "RT-6", "RET-1", return_body(return_line(**change)))
    assert response.status_code == 400, response.text
    assert field in response.json()["fields"]


@pytest.mark.parametrize(
    "missing",
    [
        "mp_return_line_number", "mp_order_line_number", "sku", "quantity", "currency",
        "requested_refund_principal", "requested_refund_tax", "reason", "preauthorized",
        "product_name", "unit_price", "tax",
    ],
)  # fmt: skip
def test_every_named_line_field_but_the_parcel_is_required(
    alice: Api, sandbox: SandboxProcess, missing: str
) -> None:
    shipped_order(alice, sandbox, "RT-7")
    line = return_line()
    del line[missing]
    response = put_return(alice, "RT-7", "RET-1", return_body(line))
    assert response.status_code == 400
    assert response.json()["fields"] == {f"return_lines[0].{missing}": "required"}


def test_the_parcel_and_the_top_level_extras_are_optional(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RT-8")
    line = return_line()
    del line["carrier"], line["tracking_number"]
    response = put_return(alice, "RT-8", "RET-1", {"return_lines": [line]})
    assert response.status_code == 200, response.text
    view = response.json()
    assert view["return_lines"][0]["carrier"] is None
    assert view["request_date"] is None
    assert view["shipping_address"] is None


def test_unknown_order_is_404_and_other_sellers_see_nothing(
    alice: Api, bob: Api, sandbox: SandboxProcess
) -> None:
    assert put_return(alice, "NOPE", "RET-1", return_body()).status_code == 404
    shipped_order(alice, sandbox, "RT-9")
    assert put_return(alice, "RT-9", "RET-1", return_body()).status_code == 200
    assert alice.call("GET", "/orders/RT-9/returns/OTHER").status_code == 404
    assert bob.call("GET", "/orders/RT-9/returns/RET-1").status_code == 404
    assert bob.call("GET", "/orders/RT-9/returns").status_code == 404
    assert bob.call("GET", "/returns").json() == {"returns": [], "next_cursor": None}
    assert alice.call("GET", "/orders/RT-9/returns", params={"x": "1"}).status_code == 400
    no_token = requests.get(sandbox.api_url + "/orders/RT-9/returns/RET-1", timeout=5)
    assert no_token.status_code == 401


def _refunded(alice: Api, sandbox: SandboxProcess, number: str) -> None:
    shipped_order(alice, sandbox, number)
    assert put_return(alice, number, "RET-1", return_body()).status_code == 200
    seller_op(sandbox, number, "RET-1", "authorize", rma="RMA-1")
    seller_op(
        sandbox,
        number,
        "RET-1",
        "refund",
        lines=[
            {
                "mp_return_line_number": "R1",
                "principal_refund_amount": 13.33,
                "shipping_refund_amount": "4.00",
            }
        ],
    )


def test_refunded_amounts_then_complete_and_complete_again(
    alice: Api, sandbox: SandboxProcess
) -> None:
    _refunded(alice, sandbox, "RT-10")
    refunds = alice.call("GET", "/orders/RT-10/returns/RET-1/refunds")
    assert refunds.status_code == 200
    assert refunds.json() == {
        "status": "REFUNDED",
        "rma": "RMA-1",
        "merchant_refund_lines": [
            {
                "mp_return_line_number": "R1",
                "principal_refund_amount": 13.33,
                "shipping_refund_amount": 4,
            }
        ],
        "errors": [],
    }
    done = alice.call("POST", "/orders/RT-10/returns/RET-1/complete", json={})
    assert done.status_code == 200
    assert done.json()["status"] == "COMPLETED"
    again = alice.call("POST", "/orders/RT-10/returns/RET-1/complete", json={})
    assert again.status_code == 200
    assert again.json() == done.json()
    assert kinds(sandbox) == {}
    late_errors = alice.call(
        "POST",
        "/orders/RT-10/returns/RET-1/errors",
        json=[{"code": "EXCESS_REFUND", "message": "too much"}],
    )
    assert late_errors.status_code == 409
    assert kinds(sandbox) == {"complete_and_errors": 1}


def test_complete_before_refunded_is_409_and_counted(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RT-11")
    assert put_return(alice, "RT-11", "RET-1", return_body()).status_code == 200
    early = alice.call("POST", "/orders/RT-11/returns/RET-1/complete", json={})
    assert early.status_code == 409
    assert kinds(sandbox) == {"return_complete_not_refunded": 1}
    bad_body = alice.call("POST", "/orders/RT-11/returns/RET-1/complete", json={"x": 1})
    assert bad_body.status_code == 400


def test_complete_without_reading_is_counted(alice: Api, sandbox: SandboxProcess) -> None:
    _refunded(alice, sandbox, "RT-12")
    done = alice.call("POST", "/orders/RT-12/returns/RET-1/complete", json={})
    assert done.status_code == 200
    assert kinds(sandbox) == {"complete_unread": 1}


def test_errors_only_once_refunded_repeat_is_harmless_and_block_complete(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RT-13")
    assert put_return(alice, "RT-13", "RET-1", return_body()).status_code == 200
    report = [
        {
            "code": "EXCESS_REFUND",
            "message": "requested refund amount for line exceeds line cost",
            "mp_return_line_number": "R1",
        }
    ]
    path = "/orders/RT-13/returns/RET-1"
    assert alice.call("POST", path + "/errors", json=report).status_code == 409
    seller_op(sandbox, "RT-13", "RET-1", "authorize")
    seller_op(sandbox, "RT-13", "RET-1", "refund")
    before = alice.call("GET", path + "/refunds").json()
    assert before["merchant_refund_lines"][0]["principal_refund_amount"] == 13.33
    assert alice.call("POST", path + "/errors", json=report).status_code == 200
    after = alice.call("GET", path + "/refunds").json()
    assert after["status"] == "REFUNDED"
    assert after["errors"] == report
    assert alice.call("POST", path + "/errors", json=report).status_code == 200
    assert alice.call("GET", path + "/refunds").json() == after
    assert kinds(sandbox) == {}
    complete = alice.call("POST", path + "/complete", json={})
    assert complete.status_code == 409
    assert kinds(sandbox) == {"complete_and_errors": 1}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"code": "EXCESS_REFUND", "message": "x"}, ""),
        ([], ""),
        ([{"code": "EXCESS_ITEM_REFUND", "message": "x"}], "[0].code"),
        ([{"code": "EXCESS_REFUND"}], "[0].message"),
        ([{"code": "EXCESS_REFUND", "message": "x", "mp_return_line_number": "R9"}],
         "[0].mp_return_line_number"),
        ([{"code": "EXCESS_REFUND", "message": "x", "debug": []}], "[0].debug"),
    ],
)  # fmt: skip
def test_bad_error_arrays_are_400(
    alice: Api, sandbox: SandboxProcess, body: object, field: str
) -> None:
    _refunded(alice, sandbox, "RT-14")
    response = alice.call("POST", "/orders/RT-14/returns/RET-1/errors", json=body)
    assert response.status_code == 400
    assert field in response.json()["fields"]


def test_listing_filters_cursor_and_updated_after(alice: Api, sandbox: SandboxProcess) -> None:
    for n in range(12):
        number = f"RL-{n:02d}"
        shipped_order(alice, sandbox, number)
        assert put_return(alice, number, "RET", return_body()).status_code == 200
    first = alice.call("GET", "/returns", params={"page_size": "10"}).json()
    assert len(first["returns"]) == 10
    assert first["next_cursor"]
    second = alice.call(
        "GET", "/returns", params={"page_size": "10", "cursor": first["next_cursor"]}
    ).json()
    assert len(second["returns"]) == 2
    assert second["next_cursor"] is None
    seen = [r["mp_order_number"] for r in first["returns"] + second["returns"]]
    assert sorted(seen) == [f"RL-{n:02d}" for n in range(12)]
    only = alice.call("GET", "/returns", params={"mp_order_numbers": "RL-01,RL-02"}).json()
    assert sorted(r["mp_order_number"] for r in only["returns"]) == ["RL-01", "RL-02"]
    offset = sandbox.state()["clock_offset_seconds"]
    mark = datetime.now(UTC) + timedelta(seconds=offset + 1)
    sandbox.shift_clock(3)
    seller_op(sandbox, "RL-05", "RET", "authorize")
    since = alice.call(
        "GET", "/returns", params={"updated_after": mark.isoformat(timespec="seconds")}
    ).json()
    assert [r["mp_order_number"] for r in since["returns"]] == ["RL-05"]
    authorized = alice.call("GET", "/returns", params={"status": "AUTHORIZED,REFUNDED"}).json()
    assert [r["mp_order_number"] for r in authorized["returns"]] == ["RL-05"]
    # Strictly after: the change's own time no longer lists it.
    inspected = sandbox.control("GET", "/returns", seller="alice", status="AUTHORIZED")
    at = inspected["returns"][0]["updated_at"]
    exact = alice.call("GET", "/returns", params={"updated_after": at}).json()
    assert exact["returns"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"page_size": "9"},
        {"page_size": "51"},
        {"status": "OPEN"},
        {"updated_after": "2024-05-10T00:00:00"},
        {"updated_after": "2024-05-10"},
        {"cursor": "c 123"},
        {"fulfillment_status": "COMPLETE"},
    ],
)
def test_listing_query_is_strict(alice: Api, params: dict[str, str]) -> None:
    response = alice.call("GET", "/returns", params=params)
    assert response.status_code == 400
    assert set(response.json()["fields"]) == set(params)


def test_complete_answers_the_return_or_nothing_under_reading_b(
    alice: Api, sandbox: SandboxProcess
) -> None:
    _refunded(alice, sandbox, "RT-20")
    assert alice.call("GET", "/orders/RT-20/returns/RET-1").ok
    sandbox.readings(complete_answer="B")
    done = alice.call("POST", "/orders/RT-20/returns/RET-1/complete", json={})
    assert done.status_code == 200
    assert done.json() == {}
    assert alice.call("POST", "/orders/RT-20/returns/RET-1/complete", json={}).json() == {}
    sandbox.readings(complete_answer="A")
    again = alice.call("POST", "/orders/RT-20/returns/RET-1/complete", json={})
    assert again.json()["status"] == "COMPLETED"


def test_a_lost_answer_to_create_is_retried_safely(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RT-21")
    sandbox.set_faults(endpoint="put_return", kind="server_error", count=1, after_view=True)
    lost = put_return(alice, "RT-21", "RET-1", return_body())
    assert lost.status_code == 500
    retried = put_return(alice, "RT-21", "RET-1", return_body())
    assert retried.status_code == 200
    assert retried.json()["status"] == "AWAITING_AUTHORIZATION"
    assert len(alice.call("GET", "/orders/RT-21/returns").json()["returns"]) == 1
    endpoints = {r["endpoint"] for r in sandbox.requests_log(limit=20)}
    assert {"put_return", "order_returns"} <= endpoints


def test_reset_clears_returns_and_refunds(alice: Api, sandbox: SandboxProcess) -> None:
    _refunded(alice, sandbox, "RT-22")
    sandbox.control("POST", "/orders/RT-22/refunds", {"refund_lines": [{"mp_line_number": "1"}]})
    assert sandbox.control("GET", "/returns")["returns"]
    sandbox.reset(keep_accounts=True)
    assert sandbox.control("GET", "/returns") == {"returns": []}
    assert sandbox.control("GET", "/refunds") == {"refunds": []}


@pytest.mark.parametrize("raw", ["1e400", "NaN", '"12,50"', "-1", '"1e3"'])
def test_money_must_be_a_finite_non_negative_decimal(
    alice: Api, sandbox: SandboxProcess, raw: str
) -> None:
    shipped_order(alice, sandbox, "RT-23")
    body = json.dumps(return_body()).replace(
        '"requested_refund_tax": "0.83"', f'"requested_refund_tax": {raw}'
    )
    assert raw in body
    response = alice.call(
        "PUT",
        "/orders/RT-23/returns/RET-1",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert "return_lines[0].requested_refund_tax" in response.json()["fields"]
