"""``GET /api/v2/orders``: every filter of the contract, strict parameters, cursor paging."""

from __future__ import annotations

import time

import pytest
import requests

from tests.sandbox.conftest import Api, order_body
from tests.sandbox.orders_v2.v2_client import SellerApi, seller_api
from tests.support.sandbox_process import SandboxProcess


@pytest.fixture
def seller(alice: Api, sandbox: SandboxProcess) -> SellerApi:
    return seller_api(sandbox, "alice")


def numbers(orders: list[dict]) -> list[str]:
    return [o["marketplace_order_number"] for o in orders]


def utc(seconds_ago: float = 0) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


@pytest.fixture
def four(alice: Api, seller: SellerApi, sandbox: SandboxProcess) -> dict[str, dict]:
    """L-NEW (imported), L-READY (confirmed), L-DONE (shipped), L-GONE (cancelled), and a
    PENDING one imported with the option on."""
    sandbox.v2_settings("alice", import_pending=True)
    for number in ("L-NEW", "L-READY", "L-DONE", "L-GONE"):
        assert alice.put_order(order_body(number)).status_code == 201
    assert alice.put_order(order_body("L-PEND", marketplace_state="PENDING")).status_code == 201
    sandbox.v2_import("alice")
    orders = {o["marketplace_order_number"]: o for o in seller.orders()}
    for number in ("L-READY", "L-DONE"):
        body = {"merchant_order_number": f"ERP-{number}"}
        seller.ok("POST", f"/orders/{orders[number]['id']}/confirm", json=body)
    done = orders["L-DONE"]
    lines = [(line["id"], line["quantity"]) for line in done["order_lines"]]
    assert seller.ship(done["id"], lines).status_code == 201
    assert alice.put_order(order_body("L-GONE", marketplace_state="CANCELLED")).status_code == 200
    return orders


def test_service_status_and_its_other_name(seller: SellerApi, four: dict) -> None:
    assert numbers(seller.orders(service_status="NEW")) == ["L-NEW", "L-PEND"]
    assert numbers(seller.orders(service_status="READY")) == ["L-READY"]
    assert numbers(seller.orders(service_status="COMPLETE")) == ["L-DONE"]
    assert numbers(seller.orders(service_status="CANCELLED")) == ["L-GONE"]
    assert numbers(seller.orders(feedamp_status="READY,COMPLETE")) == ["L-READY", "L-DONE"]


def test_normalized_marketplace_state(seller: SellerApi, four: dict) -> None:
    assert numbers(seller.orders(normalized_marketplace_state="PENDING")) == ["L-PEND"]
    assert numbers(seller.orders(normalized_marketplace_state="CANCELLED")) == ["L-GONE"]
    both = seller.orders(normalized_marketplace_state="AWAITING_SHIPMENT,PENDING")
    assert numbers(both) == ["L-NEW", "L-READY", "L-DONE", "L-PEND"]


def test_marketplace_state_changed_after(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, four: dict
) -> None:
    everything = seller.orders(marketplace_state_changed_after="2000-01-01T00:00:00Z")
    assert len(everything) == 5
    time.sleep(1.1)
    since = utc()  # whole seconds: after every change so far
    time.sleep(1.1)
    assert numbers(seller.orders(marketplace_state_changed_after=since)) == []
    moved = order_body("L-PEND", marketplace_state="AWAITING_SHIPMENT")
    assert alice.put_order(moved).status_code == 200
    changed = seller.orders(marketplace_state_changed_after=since)
    assert numbers(changed) == ["L-PEND"]
    assert changed[0]["normalized_marketplace_state"] == "AWAITING_SHIPMENT"
    plus = seller.orders(marketplace_state_changed_after=since.replace("Z", "+00:00"))
    assert numbers(plus) == ["L-PEND"]


def test_imported_after(alice: Api, seller: SellerApi, sandbox: SandboxProcess, four: dict) -> None:
    assert len(seller.orders(imported_after="2000-01-01T00:00:00+00:00")) == 5
    time.sleep(1.1)
    since = utc()
    time.sleep(1.1)
    assert alice.put_order(order_body("L-LATE")).status_code == 201
    sandbox.v2_import("alice")
    assert numbers(seller.orders(imported_after=since)) == ["L-LATE"]


def test_id_and_order_numbers(seller: SellerApi, four: dict) -> None:
    ids = f"{four['L-NEW']['id']},{four['L-GONE']['id']}"
    assert numbers(seller.orders(id=ids)) == ["L-NEW", "L-GONE"]
    assert numbers(seller.orders(marketplace_order_number="L-DONE,L-PEND")) == ["L-DONE", "L-PEND"]
    merchant = seller.orders(merchant_order_number="ERP-L-READY")
    assert numbers(merchant) == ["L-READY"]
    assert merchant[0]["merchant_order_number"] == "ERP-L-READY"


def test_the_references_further_filters_and_fields(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, four: dict
) -> None:
    """order-v2-contract.md, "beyond this": marketplace_state, the *_before bounds,
    customer_order_number, integration_id; orders carry customer_order_number,
    integration_id/_name and location."""
    assert numbers(seller.orders(marketplace_state="CANCELLED")) == ["L-GONE"]
    assert numbers(seller.orders(marketplace_state="PENDING,CANCELLED")) == ["L-GONE", "L-PEND"]
    assert seller.orders(imported_before="2000-01-01T00:00:00Z") == []
    assert len(seller.orders(imported_before="2999-01-01T00:00:00Z")) == 5
    assert seller.orders(marketplace_state_changed_before="2000-01-01T00:00:00Z") == []
    assert len(seller.orders(marketplace_state_changed_before="2999-01-01T00:00:00Z")) == 5
    (order,) = seller.orders(customer_order_number="L-READY")
    assert order["customer_order_number"] == "L-READY"
    assert order["integration_name"] == order["marketplace_name"]
    assert set(order) >= {"integration_id", "location"}
    same = seller.orders(integration_id=order["integration_id"])
    assert len(same) == 5
    assert seller.orders(integration_id="no-such-integration") == []
    refused = seller.call("GET", "/orders", params={"marketplace_state": "LOST"})
    assert refused.status_code == 400
    assert "marketplace_state" in refused.json()["fields"]


def test_run_operation_confirms_an_order(seller: SellerApi, four: dict) -> None:
    order_id = four["L-NEW"]["id"]
    url = f"/orders/{order_id}/run-operation"
    unknown = seller.call("POST", url, params={"op": "teleport"}, json={})
    assert unknown.status_code == 400
    assert "op" in unknown.json()["fields"]
    done = seller.call("POST", url, params={"op": "confirm"}, json={"merchant_order_number": "E-1"})
    assert done.status_code == 200, done.text
    assert done.json() == {"id": order_id, "merchant_order_number": "E-1"}
    assert numbers(seller.orders(service_status="READY")) == ["L-NEW", "L-READY"]
    again = seller.call("POST", url, params={"op": "confirm"}, json={})
    assert again.status_code == 409  # once per order, as POST …/confirm


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"colour": "red"}, "colour"),
        ({"service_status": "SHIPPED"}, "service_status"),
        ({"service_status": "NEW", "feedamp_status": "NEW"}, "feedamp_status"),
        ({"normalized_marketplace_state": "LOST"}, "normalized_marketplace_state"),
        ({"imported_after": "2024-04-20T10:00:00"}, "imported_after"),  # no offset
        ({"imported_after": "2024-04-20T10:00:00.123Z"}, "imported_after"),  # a fraction
        ({"marketplace_state_changed_after": "2024-04-20"}, "marketplace_state_changed_after"),
        ({"id": "12a"}, "id"),
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"cursor": "c+bm90IGEgY3Vyc29y"}, "cursor"),
    ],
)
def test_refused_parameters_are_named(seller: SellerApi, params: dict, field: str) -> None:
    response = seller.call("GET", "/orders", params=params)
    assert response.status_code == 400, response.text
    assert field in response.json()["fields"]


def test_a_repeated_parameter_and_an_unencoded_offset_are_refused(seller: SellerApi) -> None:
    repeated = seller.call("GET", "/orders?limit=10&limit=20")
    assert repeated.status_code == 400
    assert "limit" in repeated.json()["fields"]
    raw_plus = seller.call("GET", "/orders?imported_after=2024-04-20T10:00:00+02:00")
    assert raw_plus.status_code == 400  # the '+' arrived as a space


def test_paging_through_1000_orders(alice: Api, seller: SellerApi, sandbox: SandboxProcess) -> None:
    with requests.Session() as http:
        for i in range(1000):
            body = order_body(f"PG-{i:04d}")
            response = http.put(
                f"{alice.sandbox.api_url}/orders/PG-{i:04d}",
                json=body,
                headers={"Authorization": f"Bearer {alice.access_token}"},
                timeout=10,
            )
            assert response.status_code == 201, response.text
    assert sandbox.v2_import("alice") == 1000
    for limit, pages_expected in ((None, 20), ("100", 10), ("7", 143)):
        seen: list[str] = []
        params = {"limit": limit} if limit else {}
        pages = 0
        while True:
            page = seller.ok("GET", "/orders", params=params)
            pages += 1
            seen += [o["id"] for o in page["orders"]]
            if page["next_cursor"] is None:
                break
            params = {**params, "cursor": page["next_cursor"]}  # requests encodes it
        assert pages == pages_expected
        assert len(seen) == len(set(seen)) == 1000
        assert seen == sorted(seen, key=int)
