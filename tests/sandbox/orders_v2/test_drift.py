"""Drift made at the platform "elsewhere" (``POST /sandbox/api/orders/{n}/drift``) over real
HTTP: each kind shows in GET /orders/{n}, its fulfillments, refunds and returns, is recorded
(``GET /sandbox/api/drift``, ``/sandbox/api/state``), and never shows through the
``seller_updated_after`` listing (nor a return's ``updated_after``): the drift a cursor
misses, which only a reconciliation finds."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.conftest import Api, order_body, wire
from tests.sandbox.order_source.after_sale_helpers import (
    put_return,
    return_body,
    seller_op,
    seller_refund,
    shipped_order,
)
from tests.support.sandbox_process import SandboxError, SandboxProcess


def drift(sandbox: SandboxProcess, number: str, kind: str, **body: Any) -> dict[str, Any]:
    return sandbox.control("POST", f"/orders/{number}/drift", {"kind": kind, **body})


def later(sandbox: SandboxProcess) -> str:
    """Move the sandbox's clock on a minute and answer its new now as a listing filter
    (so nothing the setup did falls on or after it)."""
    sandbox.shift_clock(60)
    return wire(sandbox.state()["now"])


def seller_updated_since(api: Api, since: str) -> list[str]:
    response = api.call("GET", "/orders", params={"seller_updated_after": since, "page_size": 50})
    assert response.status_code == 200, response.text
    return [order["mp_order_number"] for order in response.json()["orders"]]


def get(api: Api, path: str) -> dict[str, Any]:
    response = api.call("GET", path)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


# -- order state ---------------------------------------------------------------------------


def test_order_cancelled_elsewhere_shows_but_not_to_the_cursor(
    alice: Api, sandbox: SandboxProcess
) -> None:
    assert alice.put_order(order_body("DR-1")).status_code == 201
    since = later(sandbox)

    made = drift(sandbox, "DR-1", "order_state", marketplace_state="CANCELLED")

    assert made["drift"]["kind"] == "order_state"
    assert made["drift"]["before"]["status"] == "ORDERED"
    assert made["drift"]["after"]["status"] == "CANCELLED"
    assert made["order"]["marketplace_state"] == "CANCELLED"
    order = get(alice, "/orders/DR-1")
    assert (order["marketplace_state"], order["status"]) == ("CANCELLED", "CANCELLED")
    assert seller_updated_since(alice, since) == []


def test_order_back_to_awaiting_shipment_is_ordered_again(
    alice: Api, sandbox: SandboxProcess
) -> None:
    assert alice.put_order(order_body("DR-2", marketplace_state="CANCELLED")).status_code == 201
    since = later(sandbox)

    drift(sandbox, "DR-2", "order_state", marketplace_state="AWAITING_SHIPMENT")

    assert get(alice, "/orders/DR-2")["status"] == "ORDERED"
    assert seller_updated_since(alice, since) == []


def test_forget_update_puts_the_platform_behind_the_marketplace(
    alice: Api, sandbox: SandboxProcess
) -> None:
    assert alice.put_order(order_body("DR-3", marketplace_state="PENDING")).status_code == 201
    assert alice.put_order(order_body("DR-3")).status_code == 200  # AWAITING_SHIPMENT
    since = later(sandbox)

    made = drift(sandbox, "DR-3", "forget_update")

    assert made["drift"]["before"]["marketplace_state"] == "AWAITING_SHIPMENT"
    assert get(alice, "/orders/DR-3")["marketplace_state"] == "PENDING"
    assert [h["state"] for h in sandbox.order("DR-3")["state_history"]] == ["PENDING"]
    assert seller_updated_since(alice, since) == []
    # The marketplace sends its version again: the platform takes it.
    assert alice.put_order(order_body("DR-3")).status_code == 200
    assert get(alice, "/orders/DR-3")["marketplace_state"] == "AWAITING_SHIPMENT"


def test_forget_update_needs_an_earlier_state(alice: Api, sandbox: SandboxProcess) -> None:
    assert alice.put_order(order_body("DR-4")).status_code == 201
    with pytest.raises(SandboxError, match="409"):
        drift(sandbox, "DR-4", "forget_update")
    assert sandbox.control("GET", "/drift")["drift"] == []


def test_forget_order_loses_it_until_placed_again(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "DR-5")

    made = drift(sandbox, "DR-5", "forget_order")

    assert made["order"] is None
    assert made["drift"]["after"] is None
    assert made["drift"]["before"]["mp_order_number"] == "DR-5"
    assert alice.call("GET", "/orders/DR-5").status_code == 404
    listed = alice.call("GET", "/orders", params={"mp_order_numbers": "DR-5"}).json()
    assert listed["orders"] == []
    assert alice.put_order(order_body("DR-5")).status_code == 201
    assert sandbox.control("GET", "/drift", kind="forget_order")["drift"][0]["mp_order_number"] == (
        "DR-5"
    )


# -- fulfillments ----------------------------------------------------------------------------


def _shipments(api: Api, number: str, line: str) -> list[dict[str, Any]]:
    fulfillments = get(api, f"/orders/{number}/fulfillments")["fulfillments"]
    return next(f["shipments"] for f in fulfillments if f["mp_line_number"] == line)


def test_a_dropped_shipment_leaves_the_line_to_ship(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "DF-1")
    assert get(alice, "/orders/DF-1")["status"] == "FULFILLED"
    dropped = _shipments(alice, "DF-1", "2")[0]
    since = later(sandbox)

    made = drift(sandbox, "DF-1", "fulfillment_drop", mp_line_number="2")

    assert made["drift"]["target"] == "line 2 shipment 0"
    assert made["drift"]["before"] == dropped
    assert made["drift"]["after"] is None
    assert _shipments(alice, "DF-1", "2") == []
    fulfillments = get(alice, "/orders/DF-1/fulfillments")
    assert fulfillments["status"] == "PARTIALLY_FULFILLED"
    line_2 = next(f for f in fulfillments["fulfillments"] if f["mp_line_number"] == "2")
    assert (line_2["status"], line_2["pending"]) == ("PENDING", {"quantity": 1})
    assert get(alice, "/orders/DF-1")["status"] == "IN_PROGRESS"
    assert seller_updated_since(alice, since) == []
    # The seller's own records lost it too: shipping the line again is a seller change.
    sandbox.ship("DF-1")
    assert len(_shipments(alice, "DF-1", "2")) == 1
    assert seller_updated_since(alice, since) == ["DF-1"]


def test_an_altered_shipment_shows_its_new_tracking_and_quantity(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "DF-2")
    before = _shipments(alice, "DF-2", "1")[0]
    since = later(sandbox)

    made = drift(
        sandbox,
        "DF-2",
        "fulfillment_alter",
        mp_line_number="1",
        shipment=0,
        carrier="DHL",
        tracking_number="JD014600006281230704",
        quantity=2,
    )

    after = _shipments(alice, "DF-2", "1")[0]
    assert made["drift"]["before"] == before
    assert made["drift"]["after"] == after
    assert (after["carrier"], after["tracking_number"], after["quantity"]) == (
        "DHL",
        "JD014600006281230704",
        2,
    )
    assert after["tracking_url"].endswith("JD014600006281230704")
    assert after["shipped_date"] == before["shipped_date"]
    assert get(alice, "/orders/DF-2")["fulfillments"][0]["shipments"][0] == after
    assert get(alice, "/orders/DF-2/fulfillments")["status"] == "PARTIALLY_FULFILLED"
    assert seller_updated_since(alice, since) == []


def test_a_history_order_s_shipment_is_dropped_from_its_view(
    alice: Api, sandbox: SandboxProcess
) -> None:
    """An order with no v2 packages behind its shipments (the history seed's)."""
    sandbox.control(
        "POST",
        "/orders/history",
        {"client_id": "mp-test", "seller": "alice", "count": 1, "prefix": "DH-", "days_ago": 3},
    )
    number = get(alice, "/orders")["orders"][0]["mp_order_number"]
    since = later(sandbox)

    drift(sandbox, number, "fulfillment_drop", mp_line_number="1")

    assert _shipments(alice, number, "1") == []
    assert get(alice, f"/orders/{number}/fulfillments")["status"] == "PENDING"
    assert get(alice, f"/orders/{number}")["status"] == "ORDERED"
    assert seller_updated_since(alice, since) == []


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"mp_line_number": "9", "carrier": "UPS"}, "404", "no shipment"),
        ({"mp_line_number": "1", "shipment": 5, "carrier": "UPS"}, "400", "must be an index"),
        ({"mp_line_number": "1", "quantity": 0}, "400", "quantity"),
        ({"mp_line_number": "1"}, "400", "at least one of"),
    ],
)
def test_a_shipment_change_is_refused_when_it_names_nothing_real(
    alice: Api, sandbox: SandboxProcess, body: dict[str, Any], status: str, message: str
) -> None:
    shipped_order(alice, sandbox, "DF-3")
    with pytest.raises(SandboxError, match=f"-> {status}:.*{message}"):
        drift(sandbox, "DF-3", "fulfillment_alter", **body)


# -- refunds and returns -----------------------------------------------------------------------


def _refund(sandbox: SandboxProcess, number: str) -> int:
    made = seller_refund(
        sandbox,
        number,
        {
            "mp_line_number": "1",
            "refund_reason": "CUSTOMER_CANCELLED",
            "refund_quantity": 1,
            "item_refund": "12.50",
        },
    )
    return int(made["feedamp_refund_id"])


def test_a_refund_completed_elsewhere_leaves_the_open_listing(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "DM-1")
    refund_id = _refund(sandbox, "DM-1")
    since = later(sandbox)

    made = drift(sandbox, "DM-1", "refund_status", refund_id=refund_id)

    assert (made["drift"]["before"]["status"], made["drift"]["after"]["status"]) == (
        "CREATED",
        "COMPLETE",
    )
    assert get(alice, f"/orders/DM-1/refunds/{refund_id}")["status"] == "COMPLETE"
    created = get(alice, "/refunds?refund_status=CREATED")["refunds"]
    assert created == []
    complete = get(alice, "/refunds?refund_status=COMPLETE&mp_order_numbers=DM-1")["refunds"]
    assert [r["feedamp_refund_id"] for r in complete] == [refund_id]
    assert seller_updated_since(alice, since) == []


def test_a_refund_s_amounts_changed_elsewhere(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "DM-2")
    refund_id = _refund(sandbox, "DM-2")
    since = later(sandbox)

    made = drift(
        sandbox,
        "DM-2",
        "refund_amounts",
        refund_id=refund_id,
        item_refund="7.25",
        shipping_refund=1,
    )

    line = get(alice, f"/orders/DM-2/refunds/{refund_id}")["merchant_refund_lines"][0]
    assert (line["item_refund"], line["shipping_refund"]) == (7.25, 1)
    assert made["drift"]["before"]["merchant_refund_lines"][0]["item_refund"] == 12.5
    assert made["drift"]["after"]["merchant_refund_lines"][0] == line
    assert seller_updated_since(alice, since) == []


def test_a_return_completed_elsewhere_is_listed_completed_but_not_updated(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "DM-3")
    assert put_return(alice, "DM-3", "R-1", return_body()).status_code == 200
    seller_op(sandbox, "DM-3", "R-1", "authorize")
    since = later(sandbox)

    made = drift(
        sandbox,
        "DM-3",
        "return_status",
        mp_return_number="R-1",
        status="COMPLETED",
        refund_lines=[
            {
                "mp_return_line_number": "R1",
                "principal_refund_amount": "12.50",
                "shipping_refund_amount": 0,
            }
        ],
    )

    assert (made["drift"]["before"]["status"], made["drift"]["after"]["status"]) == (
        "AUTHORIZED",
        "COMPLETED",
    )
    assert get(alice, "/orders/DM-3/returns/R-1")["status"] == "COMPLETED"
    refunds = get(alice, "/orders/DM-3/returns/R-1/refunds")
    assert refunds["merchant_refund_lines"] == [
        {
            "mp_return_line_number": "R1",
            "principal_refund_amount": 12.5,
            "shipping_refund_amount": 0,
        }
    ]
    completed = get(alice, "/returns?status=COMPLETED&mp_order_numbers=DM-3")["returns"]
    assert [r["mp_return_number"] for r in completed] == ["R-1"]
    updated = alice.call("GET", "/returns", params={"updated_after": since.replace("Z", "+00:00")})
    assert updated.status_code == 200, updated.text
    assert updated.json()["returns"] == []
    assert seller_updated_since(alice, since) == []


# -- the record of drift ------------------------------------------------------------------------


def test_drift_is_listed_and_counted_and_reset_clears_it(
    alice: Api, sandbox: SandboxProcess
) -> None:
    assert alice.put_order(order_body("DE-1")).status_code == 201
    assert alice.put_order(order_body("DE-2")).status_code == 201
    drift(sandbox, "DE-1", "order_state", marketplace_state="CANCELLED")
    drift(sandbox, "DE-2", "order_state", marketplace_state="CANCELLED", seller="alice")

    listed = sandbox.control("GET", "/drift", seller="alice")["drift"]

    assert [(e["mp_order_number"], e["kind"], e["target"]) for e in listed] == [
        ("DE-2", "order_state", "order"),
        ("DE-1", "order_state", "order"),
    ]
    assert listed[0]["client_id"] == "mp-test"
    assert sandbox.state()["drift"] == {"order_state": 2}
    sandbox.reset()
    assert sandbox.state()["drift"] == {}


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"kind": "teleport"}, "400"),
        ({"kind": "order_state", "marketplace_state": "LOST"}, "400"),
        ({"kind": "refund_status", "refund_id": 999}, "404"),
        ({"kind": "return_status", "mp_return_number": "NOPE"}, "404"),
    ],
)
def test_a_drift_call_naming_nothing_real_is_refused(
    alice: Api, sandbox: SandboxProcess, body: dict[str, Any], status: str
) -> None:
    assert alice.put_order(order_body("DE-3")).status_code == 201
    with pytest.raises(SandboxError, match=f"-> {status}:"):
        sandbox.control("POST", "/orders/DE-3/drift", body)
    with pytest.raises(SandboxError, match="-> 404:"):
        drift(sandbox, "NO-SUCH", "forget_order")
