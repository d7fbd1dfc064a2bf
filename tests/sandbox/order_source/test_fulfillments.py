"""The simulated seller's fulfillments and their shape on GET /orders/{n}/fulfillments."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from tests.sandbox.conftest import Api, order_body
from tests.support.sandbox_process import SandboxError, SandboxProcess

TRACKING_FORMATS = {
    "UPS": r"1Z[0-9A-Z]{16}",
    "USPS": r"\d{20,22}",
    "FedEx": r"\d{12}|\d{15}",
    "DHL": r"\d{10}",
}


def _fulfillments(api: Api, number: str) -> dict:
    response = api.call("GET", f"/orders/{number}/fulfillments")
    assert response.status_code == 200, response.text
    return response.json()


def test_unfulfilled_order_has_the_contract_shape(alice: Api) -> None:
    alice.put_order(order_body("U-1"))
    body = _fulfillments(alice, "U-1")
    assert body == {
        "status": "PENDING",
        "is_marketplace_fulfilled": False,
        "fulfillments": [
            {
                "mp_line_number": "1",
                "status": "PENDING",
                "pending": {"quantity": 3},
                "shipments": [],
                "cancellations": [],
            },
            {
                "mp_line_number": "2",
                "status": "PENDING",
                "pending": {"quantity": 1},
                "shipments": [],
                "cancellations": [],
            },
        ],
    }


@pytest.mark.parametrize("carrier", sorted(TRACKING_FORMATS))
def test_whole_shipment_with_valid_tracking_for_the_carrier(
    alice: Api, sandbox: SandboxProcess, carrier: str
) -> None:
    alice.put_order(order_body("W-1"))
    sandbox.ship("W-1", carrier=carrier)
    body = _fulfillments(alice, "W-1")
    assert body["status"] == "COMPLETE"
    for line in body["fulfillments"]:
        assert line["status"] == "COMPLETE"
        assert line["pending"] == {"quantity": 0}
        [shipment] = line["shipments"]
        assert set(shipment) == {
            "quantity",
            "carrier",
            "tracking_number",
            "shipped_date",
            "tracking_url",
        }
        assert shipment["carrier"] == carrier
        assert re.fullmatch(TRACKING_FORMATS[carrier], shipment["tracking_number"])
        assert shipment["tracking_number"] in shipment["tracking_url"]
        assert date.fromisoformat(shipment["shipped_date"])
    order = alice.call("GET", "/orders/W-1").json()
    assert order["status"] == "FULFILLED"
    assert order["acknowledged"] is True
    assert sandbox.order("W-1")["seller_updated_at"] is not None


def test_partial_shipment(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("PS-1"))
    sandbox.ship("PS-1", lines=[{"mp_line_number": "1", "quantity": 2}])
    body = _fulfillments(alice, "PS-1")
    assert body["status"] == "PARTIALLY_FULFILLED"
    first, second = body["fulfillments"]
    assert (first["status"], first["pending"]["quantity"]) == ("PARTIALLY_FULFILLED", 1)
    assert [s["quantity"] for s in first["shipments"]] == [2]
    assert (second["status"], second["pending"]["quantity"]) == ("PENDING", 1)
    assert alice.call("GET", "/orders/PS-1").json()["status"] == "IN_PROGRESS"
    # shipping the rest completes it
    sandbox.ship("PS-1")
    assert _fulfillments(alice, "PS-1")["status"] == "COMPLETE"


def test_split_shipments(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("SP-1"))
    sandbox.ship("SP-1", lines=[{"mp_line_number": "1", "quantity": 3, "split": 3}])
    [first, _] = _fulfillments(alice, "SP-1")["fulfillments"]
    assert [s["quantity"] for s in first["shipments"]] == [1, 1, 1]
    assert len({s["tracking_number"] for s in first["shipments"]}) == 3
    assert first["status"] == "COMPLETE"


def test_cancel_whole_and_partial(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("CX-1"))
    sandbox.cancel("CX-1", lines=[{"mp_line_number": "1", "quantity": 1}], reason="out_of_stock")
    [first, _] = _fulfillments(alice, "CX-1")["fulfillments"]
    assert first["cancellations"] == [{"quantity": 1, "reason": "out_of_stock"}]
    assert first["pending"]["quantity"] == 2
    sandbox.cancel("CX-1", reason="customer_cancelled")
    body = _fulfillments(alice, "CX-1")
    assert body["status"] == "COMPLETE"
    assert body["fulfillments"][1]["cancellations"] == [
        {"quantity": 1, "reason": "customer_cancelled"}
    ]
    assert alice.call("GET", "/orders/CX-1").json()["status"] == "CANCELLED"


def test_ship_and_cancel_mixed_settles_the_line(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("MX-1"))
    sandbox.ship("MX-1", lines=[{"mp_line_number": "1", "quantity": 2}])
    sandbox.cancel("MX-1", lines=[{"mp_line_number": "1", "quantity": 1}], reason="other")
    [first, _] = _fulfillments(alice, "MX-1")["fulfillments"]
    assert first["status"] == "COMPLETE"
    assert first["pending"]["quantity"] == 0


def test_seller_only_fulfills_awaiting_shipment_orders(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("PE-1", marketplace_state="PENDING"))
    with pytest.raises(SandboxError, match="409"):
        sandbox.ship("PE-1")
    sandbox.ship("PE-1", force=True)
    assert _fulfillments(alice, "PE-1")["status"] == "COMPLETE"


def test_cannot_ship_more_than_pending_unless_asked(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("EX-0"))
    with pytest.raises(SandboxError, match="409"):
        sandbox.ship("EX-0", lines=[{"mp_line_number": "1", "quantity": 4}])
    with pytest.raises(SandboxError, match="400"):
        sandbox.ship("EX-0", lines=[{"mp_line_number": "9", "quantity": 1}])


def test_every_seller_change_bumps_seller_updated_at(alice: Api, sandbox: SandboxProcess) -> None:
    # The sandbox keeps the time (it drives seller_updated_after) but only its control API
    # shows it: the contract gives the client no such field.
    alice.put_order(order_body("BU-1"))
    assert sandbox.order("BU-1")["seller_updated_at"] is None
    sandbox.ship("BU-1", lines=[{"mp_line_number": "1", "quantity": 1}])
    first = sandbox.order("BU-1")["seller_updated_at"]
    sandbox.shift_clock(30)
    sandbox.cancel("BU-1", lines=[{"mp_line_number": "2", "quantity": 1}])
    second = sandbox.order("BU-1")["seller_updated_at"]
    assert second > first


def _only_shipment(body: dict, line: str = "1") -> dict:
    [entry] = [f for f in body["fulfillments"] if f["mp_line_number"] == line]
    return entry["shipments"][0]


def test_bad_unknown_carrier(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("B-1"))
    sandbox.ship("B-1", bad="unknown_carrier")
    assert _only_shipment(_fulfillments(alice, "B-1"))["carrier"] not in TRACKING_FORMATS


@pytest.mark.parametrize("carrier", sorted(TRACKING_FORMATS))
def test_bad_tracking_number(alice: Api, sandbox: SandboxProcess, carrier: str) -> None:
    alice.put_order(order_body("B-2"))
    sandbox.ship("B-2", bad="bad_tracking_number", carrier=carrier)
    shipment = _only_shipment(_fulfillments(alice, "B-2"))
    assert shipment["carrier"] == carrier
    assert not re.fullmatch(TRACKING_FORMATS[carrier], shipment["tracking_number"])


def test_bad_excess_quantity(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("B-3"))
    sandbox.ship("B-3", bad="excess_quantity", lines=[{"mp_line_number": "1", "quantity": 3}])
    body = _fulfillments(alice, "B-3")
    shipped = sum(s["quantity"] for s in body["fulfillments"][0]["shipments"])
    assert shipped == 4  # ordered 3


def test_bad_unknown_line(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("B-4"))
    sandbox.ship("B-4", bad="unknown_line")
    lines = [f["mp_line_number"] for f in _fulfillments(alice, "B-4")["fulfillments"]]
    assert lines[:2] == ["1", "2"]
    assert len(lines) == 3
    assert lines[2] not in ("1", "2")


def test_bad_future_shipped_date(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("B-5"))
    sandbox.ship("B-5", bad="future_shipped_date")
    today = date.fromisoformat(sandbox.state()["now"][:10])
    shipped = date.fromisoformat(_only_shipment(_fulfillments(alice, "B-5"))["shipped_date"])
    assert shipped > today + timedelta(days=1)


def test_fulfillments_of_unknown_order_is_404(alice: Api) -> None:
    assert alice.call("GET", "/orders/NOPE/fulfillments").status_code == 404
