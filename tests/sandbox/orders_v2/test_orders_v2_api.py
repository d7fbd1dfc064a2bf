"""Order API v2 over real HTTP: the token, the import, confirm, packages, cancellations,
events and the workflow that decides what the marketplace sees."""

from __future__ import annotations

import time

import pytest

from tests.sandbox.conftest import Api, order_body
from tests.sandbox.orders_v2.v2_client import LINE_KEYS, ORDER_KEYS, SellerApi, seller_api
from tests.support.sandbox_process import SandboxProcess


@pytest.fixture
def seller(alice: Api, sandbox: SandboxProcess) -> SellerApi:
    return seller_api(sandbox, "alice")


def placed_and_imported(
    alice: Api, sandbox: SandboxProcess, number: str, **overrides: object
) -> None:
    assert alice.put_order(order_body(number, **overrides)).status_code == 201
    sandbox.v2_import("alice")


def v2_order(seller: SellerApi, number: str) -> dict:
    (order,) = seller.orders(marketplace_order_number=number)
    return order


def marketplace_view(alice: Api, number: str) -> dict:
    response = alice.call("GET", f"/orders/{number}/fulfillments")
    assert response.status_code == 200, response.text
    return response.json()


def shipped_units(view: dict) -> int:
    return sum(s["quantity"] for line in view["fulfillments"] for s in line["shipments"])


# -- token ------------------------------------------------------------------------------------


def test_get_token_needs_the_users_basic_credentials(seller: SellerApi) -> None:
    assert set(seller.get_token().json()) == {"token"}
    assert seller.get_token(auth=(seller.username, "wrong")).status_code == 401
    assert seller.get_token(auth=("nobody", "x")).status_code == 401
    assert seller.get_token(auth=None).status_code == 401
    refused = seller.get_token(headers={"client": "999"})
    assert refused.status_code == 403, refused.text


def test_v2_calls_need_basic_token_and_client(seller: SellerApi) -> None:
    assert seller.call("GET", "/orders").status_code == 200
    assert seller.call("GET", "/orders", headers={"token": "v2t_made_up"}).status_code == 401
    assert seller.call("GET", "/orders", auth=(seller.username, "wrong")).status_code == 401
    assert seller.call("GET", "/orders", headers={"client": "1"}).status_code == 403
    no_client = seller.call("GET", "/orders", headers={"client": ""})
    assert no_client.status_code in (401, 403)


def test_the_101st_active_token_is_refused_and_a_kept_token_still_works(
    seller: SellerApi, sandbox: SandboxProcess
) -> None:
    first = seller.token  # the fixture's login is the first of the 100
    for _ in range(99):
        assert seller.get_token().status_code == 200
    refused = seller.get_token()
    assert refused.status_code == 429
    assert "reuse" in refused.json()["message"]
    seller.token = first
    assert seller.call("GET", "/orders").status_code == 200  # reuse works
    # A day later every token has expired: the kept one is refused, a new one is issued.
    sandbox.shift_clock(24 * 3600 + 1)
    assert seller.call("GET", "/orders").status_code == 401
    assert seller.get_token().status_code == 200


# -- import -----------------------------------------------------------------------------------


def test_scheduled_import_takes_pending_only_with_the_option(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    assert alice.put_order(order_body("IM-1")).status_code == 201
    assert alice.put_order(order_body("IM-2", marketplace_state="PENDING")).status_code == 201
    assert seller.orders() == []  # not before the import
    sandbox.v2_settings("alice", import_interval_seconds=0.2)
    deadline = time.monotonic() + 10
    while not seller.orders() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [o["marketplace_order_number"] for o in seller.orders()] == ["IM-1"]
    order = v2_order(seller, "IM-1")
    assert set(order) == ORDER_KEYS
    assert all(set(line) == LINE_KEYS for line in order["order_lines"])
    assert order["marketplace_name"] == "Marketplace X"
    assert [e["kind"] for e in sandbox.v2_order("IM-1")["events"]] == ["new_order"]

    sandbox.v2_settings("alice", import_pending=True)
    sandbox.v2_import("alice")
    assert v2_order(seller, "IM-2")["normalized_marketplace_state"] == "PENDING"


def test_a_marketplace_state_change_reaches_the_v2_order(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    placed_and_imported(alice, sandbox, "SC-1")
    before = seller.orders(marketplace_state_changed_after="2000-01-01T00:00:00Z")
    assert [o["marketplace_order_number"] for o in before] == ["SC-1"]
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))
    assert alice.put_order(order_body("SC-1", marketplace_state="CANCELLED")).status_code == 200
    changed = seller.orders(marketplace_state_changed_after=since)
    assert [o["normalized_marketplace_state"] for o in changed] == ["CANCELLED"]
    assert "marketplace_state_changed" in [e["kind"] for e in sandbox.v2_order("SC-1")["events"]]
    # A cancelled order is never shipped.
    line = changed[0]["order_lines"][0]["id"]
    assert seller.ship(changed[0]["id"], [(line, 1)]).status_code == 409


# -- confirm, packages, cancellations ---------------------------------------------------


def test_confirm_once_then_409(alice: Api, seller: SellerApi, sandbox: SandboxProcess) -> None:
    placed_and_imported(alice, sandbox, "CF-1")
    order_id = v2_order(seller, "CF-1")["id"]
    assert [o["id"] for o in seller.orders(service_status="NEW")] == [order_id]
    body = {"merchant_order_number": "ERP-77"}
    answer = seller.ok("POST", f"/orders/{order_id}/confirm", json=body)
    assert answer == {"id": order_id, "merchant_order_number": "ERP-77"}
    again = seller.call("POST", f"/orders/{order_id}/confirm", json={})
    assert again.status_code == 409
    assert v2_order(seller, "CF-1")["merchant_order_number"] == "ERP-77"
    assert [o["id"] for o in seller.orders(service_status="READY")] == [order_id]
    assert marketplace_view(alice, "CF-1")["status"] == "PENDING"  # confirming ships nothing
    assert alice.call("GET", "/orders/CF-1").json()["acknowledged"] is True


def test_over_quantity_is_refused_naming_the_line(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    placed_and_imported(alice, sandbox, "OQ-1")
    order = v2_order(seller, "OQ-1")
    red, blue = (line["id"] for line in order["order_lines"])  # 3 red, 1 blue
    assert seller.ship(order["id"], [(red, 2)]).status_code == 201
    assert seller.cancel(order["id"], [(blue, 1)]).status_code == 201
    too_many = seller.cancel(order["id"], [(red, 2)])
    assert too_many.status_code == 400
    body = too_many.json()
    assert red in body["message"]
    assert red in body["fields"]["cancellation_lines[0].quantity"]
    shipped_again = seller.ship(order["id"], [(blue, 1)])
    assert shipped_again.status_code == 400
    assert blue in shipped_again.json()["message"]
    # Nothing of the refused calls was kept.
    assert shipped_units(marketplace_view(alice, "OQ-1")) == 2


def test_fulfillments_and_cancellations_list_get_put_delete(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    placed_and_imported(alice, sandbox, "FL-1")
    order = v2_order(seller, "FL-1")
    red, blue = (line["id"] for line in order["order_lines"])
    path = f"/orders/{order['id']}"
    made = seller.ship(
        order["id"], [(red, 1), (blue, 1)], carrier="FedEx", tracking_number="123456789012"
    )
    assert made.status_code == 201
    package = made.json()
    assert set(package) == {"id", "fulfillment_type", "fulfillment_lines", "shipment", "state"}
    assert package["state"] == "shipped"
    assert package["shipment"]["tracking_url"].endswith("123456789012")
    assert seller.ok("GET", f"{path}/fulfillments") == {"fulfillments": [package]}
    assert seller.ok("GET", f"{path}/fulfillments/{package['id']}") == package

    body = {
        "fulfillment_type": "shipment",
        "fulfillment_lines": [{"line_id": red, "quantity": 3}],
        "shipment": {
            "shipped_date": "2024-04-21T09:00:00Z",
            "carrier": "DHL",
            "tracking_number": "1234567890",
        },
    }
    changed = seller.ok("PUT", f"{path}/fulfillments/{package['id']}", json=body)
    assert changed["fulfillment_lines"] == [{"line_id": red, "quantity": 3}]
    view = marketplace_view(alice, "FL-1")
    red_view = view["fulfillments"][0]
    assert red_view["shipments"][0]["carrier"] == "DHL"
    assert red_view["shipments"][0]["shipped_date"] == "2024-04-21"  # a date there

    cancelled = seller.cancel(order["id"], [(blue, 1)], reason="customer_cancelled")
    assert cancelled.status_code == 201
    cancellation = cancelled.json()
    assert set(cancellation) == {"id", "cancellation_lines", "reason"}
    assert seller.ok("GET", f"{path}/cancellations") == {"cancellations": [cancellation]}
    assert seller.ok("GET", f"{path}/cancellations/{cancellation['id']}") == cancellation
    put = {"cancellation_lines": [{"line_id": blue, "quantity": 1}], "reason": "other"}
    assert (
        seller.ok("PUT", f"{path}/cancellations/{cancellation['id']}", json=put)["reason"]
        == "other"
    )
    assert marketplace_view(alice, "FL-1")["status"] == "COMPLETE"

    assert seller.ok("DELETE", f"{path}/cancellations/{cancellation['id']}") == {}
    assert seller.ok("DELETE", f"{path}/fulfillments/{package['id']}") == {}
    assert seller.call("GET", f"{path}/fulfillments/{package['id']}").status_code == 404
    assert marketplace_view(alice, "FL-1")["status"] == "PENDING"
    kinds = [e["kind"] for e in sandbox.v2_order("FL-1")["events"]]
    for kind in (
        "new_order",
        "fulfilled",
        "fulfillment_updated",
        "cancelled",
        "fulfillment_deleted",
        "released",
    ):
        assert kind in kinds


def test_bodies_are_read_strictly(alice: Api, seller: SellerApi, sandbox: SandboxProcess) -> None:
    placed_and_imported(alice, sandbox, "BD-1")
    order = v2_order(seller, "BD-1")
    red = order["order_lines"][0]["id"]
    fractional = seller.ship(order["id"], [(red, 1)], shipped_date="2024-04-20T10:00:00.5Z")
    assert fractional.status_code == 400
    assert "shipment.shipped_date" in fractional.json()["fields"]
    no_offset = seller.ship(order["id"], [(red, 1)], shipped_date="2024-04-20T10:00:00")
    assert no_offset.status_code == 400
    unknown_line = seller.ship(order["id"], [("999", 1)])
    assert "fulfillment_lines[0].line_id" in unknown_line.json()["fields"]
    no_reason = seller.call(
        "POST",
        f"/orders/{order['id']}/cancellations",
        json={"cancellation_lines": [{"line_id": red, "quantity": 1}]},
    )
    assert no_reason.status_code == 400
    extra = seller.call(
        "POST", f"/orders/{order['id']}/confirm", json={"merchant_order_number": "X", "note": 1}
    )
    assert extra.status_code == 400
    assert seller.call("GET", f"/orders/{order['id']}", params={"x": "1"}).status_code == 400


def test_another_sellers_orders_are_404(
    alice: Api, bob: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    assert bob.put_order(order_body("BOB-1")).status_code == 201
    sandbox.v2_import("bob")
    (bobs,) = sandbox.v2_orders(seller="bob")
    assert seller.call("GET", f"/orders/{bobs['id']}").status_code == 404
    assert seller.orders() == []


# -- workflow -------------------------------------------------------------------------------------


def test_each_shipment_workflow_shows_each_package_as_it_is_made(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    placed_and_imported(alice, sandbox, "WF-E")
    order = v2_order(seller, "WF-E")
    red, blue = (line["id"] for line in order["order_lines"])
    assert seller.ship(order["id"], [(red, 1)]).status_code == 201
    view = marketplace_view(alice, "WF-E")
    assert (view["status"], shipped_units(view)) == ("PARTIALLY_FULFILLED", 1)
    listed = alice.call(
        "GET", "/orders", params={"fulfillment_status": "PARTIALLY_FULFILLED"}
    ).json()
    assert [o["mp_order_number"] for o in listed["orders"]] == ["WF-E"]
    assert seller.ship(order["id"], [(red, 2), (blue, 1)]).status_code == 201
    view = marketplace_view(alice, "WF-E")
    assert (view["status"], shipped_units(view)) == ("COMPLETE", 4)


def test_whole_order_workflow_shows_nothing_until_the_last_line_is_settled(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    sandbox.v2_settings("alice", workflow="whole_order")
    placed_and_imported(alice, sandbox, "WF-W")
    order = v2_order(seller, "WF-W")
    red, blue = (line["id"] for line in order["order_lines"])
    assert seller.ship(order["id"], [(red, 2)]).status_code == 201
    assert seller.ship(order["id"], [(red, 1)]).status_code == 201
    view = marketplace_view(alice, "WF-W")
    assert (view["status"], shipped_units(view)) == ("PENDING", 0)
    listed = alice.call("GET", "/orders", params={"fulfillment_status": "UNFULFILLED"}).json()
    assert [o["mp_order_number"] for o in listed["orders"]] == ["WF-W"]
    assert [p["released"] for p in sandbox.v2_order("WF-W")["fulfillments"]] == [False, False]
    assert seller.cancel(order["id"], [(blue, 1)]).status_code == 201  # the last line settled
    view = marketplace_view(alice, "WF-W")
    assert (view["status"], shipped_units(view)) == ("COMPLETE", 3)
    assert view["fulfillments"][1]["cancellations"] == [{"quantity": 1, "reason": "out_of_stock"}]
    assert seller.orders(service_status="COMPLETE")[0]["id"] == order["id"]


def test_the_control_call_ships_through_the_v2_path(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    assert alice.put_order(order_body("CT-1")).status_code == 201
    sandbox.ship("CT-1", split=2)  # not imported yet: the control call imports it first
    order = v2_order(seller, "CT-1")
    packages = seller.ok("GET", f"/orders/{order['id']}/fulfillments")["fulfillments"]
    assert len(packages) == 2
    assert sum(line["quantity"] for p in packages for line in p["fulfillment_lines"]) == 4
    assert shipped_units(marketplace_view(alice, "CT-1")) == 4
    assert seller.orders(service_status="COMPLETE")[0]["id"] == order["id"]
    # Under the whole-order workflow the control call is held back the same way.
    sandbox.v2_settings("alice", workflow="whole_order")
    assert alice.put_order(order_body("CT-2")).status_code == 201
    sandbox.ship("CT-2", lines=[{"mp_line_number": "1", "quantity": 3}])
    assert shipped_units(marketplace_view(alice, "CT-2")) == 0
    sandbox.cancel("CT-2", lines=[{"mp_line_number": "2", "quantity": 1}])
    assert shipped_units(marketplace_view(alice, "CT-2")) == 3
