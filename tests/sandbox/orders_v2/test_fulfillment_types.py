"""v2 fulfillments of the three kinds the reference names (a shipment, a local delivery, a
pickup) and what the marketplace sees of each: a shipment line with its carrier
(``LOCAL_DELIVERY`` / ``PICKUP`` when there is no parcel carrier) and no tracking."""

from __future__ import annotations

import pytest

from tests.sandbox.conftest import Api, order_body
from tests.sandbox.orders_v2.v2_client import SellerApi, seller_api
from tests.support.sandbox_process import SandboxProcess


@pytest.fixture
def seller(alice: Api, sandbox: SandboxProcess) -> SellerApi:
    return seller_api(sandbox, "alice")


def _order(alice: Api, seller: SellerApi, sandbox: SandboxProcess, number: str) -> dict:
    assert alice.put_order(order_body(number)).status_code == 201
    sandbox.v2_import("alice")
    (order,) = seller.orders(marketplace_order_number=number)
    return order


def test_local_delivery_and_pickup_reach_the_marketplace_without_tracking(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    order = _order(alice, seller, sandbox, "FT-1")
    red, blue = (line["id"] for line in order["order_lines"])
    path = f"/orders/{order['id']}/fulfillments"
    local = {
        "fulfillment_type": "local_delivery",
        "fulfillment_lines": [{"line_id": red, "quantity": 3}],
        "local_delivery": {"delivered_date": "2024-04-21T09:00:00Z"},
    }
    made = seller.ok("POST", path, status=201, json=local)
    assert made["fulfillment_type"] == "local_delivery"
    assert made["local_delivery"] == {
        "delivered_date": "2024-04-21T09:00:00Z",
        "carrier": "LOCAL_DELIVERY",
    }
    assert "shipment" not in made
    pickup = {
        "fulfillment_type": "pickup",
        "fulfillment_lines": [{"line_id": blue, "quantity": 1}],
        "pickup": {"picked_up_date": "2024-04-22T15:30:00+02:00"},
    }
    picked = seller.ok("POST", path, status=201, json=pickup)
    assert picked["pickup"] == {"picked_up_date": "2024-04-22T15:30:00+02:00"}
    assert seller.ok("GET", path) == {"fulfillments": [made, picked]}
    view = alice.call("GET", "/orders/FT-1/fulfillments").json()
    shipments = {line["mp_line_number"]: line["shipments"] for line in view["fulfillments"]}
    assert [(s["carrier"], s["tracking_number"], s["shipped_date"]) for s in shipments["1"]] == [
        ("LOCAL_DELIVERY", None, "2024-04-21")
    ]
    assert [(s["carrier"], s["tracking_number"]) for s in shipments["2"]] == [("PICKUP", None)]
    # A courier's local delivery keeps the courier's name.
    order = _order(alice, seller, sandbox, "FT-2")
    courier = {
        **local,
        "fulfillment_lines": [{"line_id": order["order_lines"][0]["id"], "quantity": 1}],
        "local_delivery": {"delivered_date": "2024-04-21T09:00:00Z", "carrier": "Stuart"},
    }
    made = seller.ok("POST", f"/orders/{order['id']}/fulfillments", status=201, json=courier)
    assert made["local_delivery"]["carrier"] == "Stuart"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"fulfillment_type": "drone"}, "fulfillment_type"),
        ({"fulfillment_type": "pickup", "pickup": {}}, "pickup.picked_up_date"),
        (
            {"fulfillment_type": "pickup", "pickup": {"picked_up_date": "2024-04-22T15:30:00"}},
            "pickup.picked_up_date",
        ),
        (
            {
                "fulfillment_type": "local_delivery",
                "local_delivery": {
                    "delivered_date": "2024-04-21T09:00:00Z",
                    "tracking_number": "1",
                },
            },
            "local_delivery.tracking_number",
        ),
        (
            {
                "fulfillment_type": "pickup",
                "pickup": {"picked_up_date": "2024-04-22T15:30:00Z"},
                "shipment": {},
            },
            "shipment",
        ),
    ],
)
def test_bad_fulfillment_kinds_are_400(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, body: dict, field: str
) -> None:
    order = _order(alice, seller, sandbox, "FT-3")
    sent = {
        "fulfillment_lines": [{"line_id": order["order_lines"][0]["id"], "quantity": 1}],
        **body,
    }
    response = seller.call("POST", f"/orders/{order['id']}/fulfillments", json=sent)
    assert response.status_code == 400, response.text
    assert field in response.json()["fields"], response.text
