"""Correcting and deleting a package, through v2 (``PUT``/``DELETE
/api/v2/orders/{id}/fulfillments/{fid}``) and the v2 order page, and what the marketplace
then reads through v1: the corrected package (or none), and a listing by
``seller_updated_after`` that finds the order again."""

from __future__ import annotations

import re

import pytest
import requests

from tests.sandbox.conftest import Api, csrf_token, order_body, wire
from tests.sandbox.orders_v2.v2_client import SellerApi, seller_api
from tests.support.sandbox_process import SandboxProcess

BAD_UPS = "1Z12-BAD"
GOOD_UPS = "1Z999AA10123456784"


@pytest.fixture
def seller(alice: Api, sandbox: SandboxProcess) -> SellerApi:
    return seller_api(sandbox, "alice")


def imported(alice: Api, seller: SellerApi, sandbox: SandboxProcess, number: str) -> dict:
    assert alice.put_order(order_body(number)).status_code == 201
    sandbox.v2_import("alice")
    (order,) = seller.orders(marketplace_order_number=number)
    return order


def package_body(line_id: str, quantity: int, **shipment: str) -> dict:
    return {
        "fulfillment_type": "shipment",
        "fulfillment_lines": [{"line_id": line_id, "quantity": quantity}],
        "shipment": {
            "shipped_date": "2024-04-20T10:00:00+02:00",
            "carrier": "UPS",
            "tracking_number": GOOD_UPS,
            **shipment,
        },
    }


def v1_view(alice: Api, number: str) -> dict:
    response = alice.call("GET", f"/orders/{number}/fulfillments")
    assert response.status_code == 200, response.text
    return response.json()


def listed_since(alice: Api, boundary: str) -> dict[str, dict]:
    response = alice.call("GET", "/orders", params={"seller_updated_after": boundary})
    assert response.status_code == 200, response.text
    return {o["mp_order_number"]: o for o in response.json()["orders"]}


def later(sandbox: SandboxProcess) -> str:
    """A boundary after everything so far (the sandbox's clock moved on a minute)."""
    sandbox.shift_clock(60)
    boundary = wire(sandbox.state()["now"])  # UTC, Z, whole seconds: as the listing takes it
    sandbox.shift_clock(1)
    return boundary


# -- through v2 -------------------------------------------------------------------------------


def test_put_corrects_a_released_package_and_v1_lists_the_order_again(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    order = imported(alice, seller, sandbox, "PC-1")
    red, blue = (line["id"] for line in order["order_lines"])  # 3 red, 1 blue
    path = f"/orders/{order['id']}/fulfillments"
    made = seller.ok("POST", path, 201, json=package_body(red, 3, tracking_number=BAD_UPS))
    assert v1_view(alice, "PC-1")["fulfillments"][0]["shipments"][0]["tracking_number"] == BAD_UPS
    boundary = later(sandbox)
    assert listed_since(alice, boundary) == {}

    # The package's own 3 units do not count against it: 3 of 3 red is no over-quantity.
    corrected = seller.ok("PUT", f"{path}/{made['id']}", json=package_body(red, 3))
    assert corrected == {
        "id": made["id"],
        "fulfillment_type": "shipment",
        "fulfillment_lines": [{"line_id": red, "quantity": 3}],
        "shipment": {
            "shipped_date": "2024-04-20T10:00:00+02:00",
            "carrier": "UPS",
            "tracking_number": GOOD_UPS,
            "tracking_url": f"https://www.ups.com/track?tracknum={GOOD_UPS}",
        },
        "state": "shipped",
    }
    assert seller.ok("GET", f"{path}/{made['id']}") == corrected
    assert seller.ok("GET", path) == {"fulfillments": [corrected]}

    # v1: the corrected package replaces the bad one (one shipment, not two), and the
    # listing by seller_updated_after finds the order again, carrying it.
    red_line = v1_view(alice, "PC-1")["fulfillments"][0]
    assert red_line["mp_line_number"] == "1"
    assert red_line["shipments"] == [
        {
            "quantity": 3,
            "carrier": "UPS",
            "tracking_number": GOOD_UPS,
            "shipped_date": "2024-04-20",
            "tracking_url": f"https://www.ups.com/track?tracknum={GOOD_UPS}",
        }
    ]
    listed = listed_since(alice, boundary)
    assert list(listed) == ["PC-1"]
    shipments = listed["PC-1"]["fulfillments"][0]["shipments"]
    assert [s["tracking_number"] for s in shipments] == [GOOD_UPS]

    # Units may move between lines too, within what is left.
    moved = seller.ok("PUT", f"{path}/{made['id']}", json=package_body(blue, 1))
    assert moved["fulfillment_lines"] == [{"line_id": blue, "quantity": 1}]
    view = {line["mp_line_number"]: line for line in v1_view(alice, "PC-1")["fulfillments"]}
    assert view["1"]["shipments"] == []
    assert view["1"]["pending"] == {"quantity": 3}
    assert [s["quantity"] for s in view["2"]["shipments"]] == [1]
    kinds = [e["kind"] for e in sandbox.v2_order("PC-1")["events"]]
    assert kinds.count("fulfillment_updated") == 2
    assert sandbox.violations()["total"] == 0


def test_delete_removes_the_package_from_v1_and_its_units_can_ship_again(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    order = imported(alice, seller, sandbox, "PD-1")
    red, blue = (line["id"] for line in order["order_lines"])
    path = f"/orders/{order['id']}/fulfillments"
    bad = seller.ok("POST", path, 201, json=package_body(red, 3, tracking_number=BAD_UPS))
    good = seller.ok("POST", path, 201, json=package_body(blue, 1))
    assert v1_view(alice, "PD-1")["status"] == "COMPLETE"
    boundary = later(sandbox)

    assert seller.ok("DELETE", f"{path}/{bad['id']}") == {}
    assert seller.call("GET", f"{path}/{bad['id']}").status_code == 404
    gone = seller.call("DELETE", f"{path}/{bad['id']}")
    assert gone.status_code == 404
    assert gone.json()["error"] == "not_found"
    assert seller.ok("GET", path) == {"fulfillments": [good]}
    view = v1_view(alice, "PD-1")
    assert view["status"] == "PARTIALLY_FULFILLED"
    lines = {line["mp_line_number"]: line for line in view["fulfillments"]}
    assert lines["1"]["shipments"] == []
    assert lines["1"]["pending"] == {"quantity": 3}
    assert lines["2"]["shipments"][0]["tracking_number"] == GOOD_UPS
    listed = listed_since(alice, boundary)
    assert list(listed) == ["PD-1"]
    assert next(line["shipments"] for line in listed["PD-1"]["fulfillments"]) == []
    assert seller.orders(service_status="COMPLETE") == []  # lines left again

    # The deleted units are left to ship: a new package of all 3 is accepted.
    seller.ok("POST", path, 201, json=package_body(red, 3))
    assert v1_view(alice, "PD-1")["status"] == "COMPLETE"
    assert "fulfillment_deleted" in [e["kind"] for e in sandbox.v2_order("PD-1")["events"]]
    assert sandbox.violations()["total"] == 0


def test_put_is_read_as_strictly_as_post(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    order = imported(alice, seller, sandbox, "PS-1")
    red, blue = (line["id"] for line in order["order_lines"])
    path = f"/orders/{order['id']}/fulfillments"
    made = seller.ok("POST", path, 201, json=package_body(red, 2))
    seller.ok("POST", path, 201, json=package_body(red, 1))
    url = f"{path}/{made['id']}"

    too_many = seller.call("PUT", url, json=package_body(red, 3))  # 1 is in the other package
    assert too_many.status_code == 400
    body = too_many.json()
    assert body["error"] == "validation_error"
    assert red in body["fields"]["fulfillment_lines[0].quantity"]
    assert "over quantity" in body["message"]

    unknown = seller.call("PUT", url, json={**package_body(red, 2), "note": "x"})
    assert unknown.status_code == 400
    assert unknown.json()["fields"] == {"note": "unknown field"}
    no_shipment = {"fulfillment_type": "shipment", "fulfillment_lines": [{"line_id": red}]}
    missing = seller.call("PUT", url, json=no_shipment)
    assert missing.status_code == 400
    assert {"fulfillment_lines[0].quantity"} <= set(missing.json()["fields"])
    fraction = seller.call(
        "PUT", url, json=package_body(blue, 1, shipped_date="2024-04-20T10:00:00.5Z")
    )
    assert fraction.status_code == 400
    assert "shipment.shipped_date" in fraction.json()["fields"]
    assert seller.call("PUT", url, params={"x": "1"}, json=package_body(red, 2)).status_code == 400
    assert seller.call("POST", url, json=package_body(red, 2)).status_code == 405
    assert seller.call("PUT", f"{path}/999999", json=package_body(red, 2)).status_code == 404
    assert seller.call("PUT", f"{path}/abc", json=package_body(red, 2)).status_code == 404
    # Nothing of the refused calls was kept.
    assert seller.ok("GET", url) == made


def test_put_and_delete_are_refused_once_the_order_left_awaiting_shipment(
    alice: Api, bob: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    order = imported(alice, seller, sandbox, "PX-1")
    red, blue = (line["id"] for line in order["order_lines"])
    path = f"/orders/{order['id']}/fulfillments"
    made = seller.ok("POST", path, 201, json=package_body(red, 3))
    seller.ok("POST", path, 201, json=package_body(blue, 1))
    # Another seller's order: 404 whatever the id.
    assert bob.put_order(order_body("BOB-9")).status_code == 201
    sandbox.v2_import("bob")
    (bobs,) = sandbox.v2_orders(seller="bob")
    assert seller.call("DELETE", f"/orders/{bobs['id']}/fulfillments/{made['id']}").status_code == (
        404
    )

    assert alice.put_order(order_body("PX-1", marketplace_state="SHIPPED")).status_code == 200
    refused = seller.call("PUT", f"{path}/{made['id']}", json=package_body(red, 3))
    assert refused.status_code == 409
    assert refused.json()["error"] == "conflict"
    assert "SHIPPED" in refused.json()["message"]
    deleted = seller.call("DELETE", f"{path}/{made['id']}")
    assert deleted.status_code == 409
    assert seller.ok("GET", f"{path}/{made['id']}") == made
    assert v1_view(alice, "PX-1")["status"] == "COMPLETE"


# -- the v2 order page ----------------------------------------------------------------------


def test_order_page_corrects_and_deletes_a_package(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    order = imported(alice, seller, sandbox, "PP-1")
    red, blue = (line["id"] for line in order["order_lines"])
    path = f"/orders/{order['id']}/fulfillments"
    bad = seller.ok("POST", path, 201, json=package_body(red, 3, tracking_number=BAD_UPS))
    url = f"{sandbox.base_url}/sandbox/v2/orders/{order['id']}/"
    with requests.Session() as browser:
        page = browser.get(url, timeout=10).text
        assert f'id="correct-{bad["id"]}"' in page
        assert f'id="delete-{bad["id"]}"' in page
        boundary = later(sandbox)
        form = {
            "csrfmiddlewaretoken": csrf_token(page),
            f"qty-{red}": "3",
            "carrier": "UPS",
            "tracking_number": GOOD_UPS,
            "shipped_date": "2024-04-20T10:00:00+02:00",
        }
        corrected = browser.post(url + f"packages/{bad['id']}/correct", data=form, timeout=10)
        assert corrected.status_code == 200
        assert f"package {bad['id']} corrected (UPS {GOOD_UPS})" in corrected.text
        assert seller.ok("GET", f"{path}/{bad['id']}")["shipment"]["tracking_number"] == GOOD_UPS
        shipments = v1_view(alice, "PP-1")["fulfillments"][0]["shipments"]
        assert [s["tracking_number"] for s in shipments] == [GOOD_UPS]
        assert list(listed_since(alice, boundary)) == ["PP-1"]

        over = {**form, f"qty-{red}": "3", f"qty-{blue}": "2"}
        refused = browser.post(url + f"packages/{bad['id']}/correct", data=over, timeout=10)
        assert refused.status_code == 400
        error = re.search(r'<p class="error" id="error">(.*?)</p>', refused.text)
        assert error
        assert blue in error.group(1)

        token = csrf_token(corrected.text)
        deleted = browser.post(
            url + f"packages/{bad['id']}/delete", data={"csrfmiddlewaretoken": token}, timeout=10
        )
        assert f"package {bad['id']} deleted" in deleted.text
        assert seller.ok("GET", path) == {"fulfillments": []}
        assert v1_view(alice, "PP-1")["fulfillments"][0]["shipments"] == []
        kinds = [e["kind"] for e in sandbox.v2_order("PP-1")["events"]]
        assert "fulfillment_updated" in kinds
        assert "fulfillment_deleted" in kinds

        # Once the marketplace cancelled the order, the forms are gone and a post is 409.
        seller.ok("POST", path, 201, json=package_body(blue, 1))
        (package,) = seller.ok("GET", path)["fulfillments"]
        token = csrf_token(browser.get(url, timeout=10).text)  # a form still open
        assert alice.put_order(order_body("PP-1", marketplace_state="CANCELLED")).status_code == 200
        page = browser.get(url, timeout=10).text
        assert f'id="correct-{package["id"]}"' not in page
        late = browser.post(
            url + f"packages/{package['id']}/delete",
            data={"csrfmiddlewaretoken": token},
            timeout=10,
        )
        assert late.status_code == 409
        assert seller.ok("GET", path) == {"fulfillments": [package]}


def test_seller_page_pauses_and_resumes_the_simulated_seller(
    seller: SellerApi, sandbox: SandboxProcess
) -> None:
    url = f"{sandbox.base_url}/sandbox/v2/sellers/alice/"

    def state(html: str) -> str:
        found = re.search(r'id="simulator-state">(\w+)<', html)
        assert found, html
        return found.group(1)

    with requests.Session() as browser:
        page = browser.get(url, timeout=10).text
        assert state(page) == "working"
        assert "no simulator process has asked" in page
        paused = browser.post(
            url + "simulator", data={"csrfmiddlewaretoken": csrf_token(page), "paused": "1"}
        )
        assert paused.status_code == 200
        assert state(paused.text) == "paused"
        assert "Resume the simulated seller" in paused.text
        # The same switch as the control API's, which the simulator process reads.
        assert sandbox.control("GET", "/v2/sellers/alice/simulator") == {"paused": True}
        sandbox.set_simulator("alice", paused=False)
        assert state(browser.get(url, timeout=10).text) == "working"
        sandbox.set_simulator("alice", paused=True)
        page = browser.get(url, timeout=10).text
        assert state(page) == "paused"
        resumed = browser.post(
            url + "simulator", data={"csrfmiddlewaretoken": csrf_token(page), "paused": "0"}
        )
        assert state(resumed.text) == "working"
        assert "Pause the simulated seller" in resumed.text
        assert sandbox.control("GET", "/v2/sellers/alice/simulator") == {"paused": False}
        # The simulator process asks with its header: the page says when it last did.
        requests.get(
            sandbox.base_url + "/sandbox/api/v2/sellers/alice/simulator",
            headers={"X-Seller-Sim": "1"},
            timeout=10,
        )
        assert "its process last asked 0 s ago" in browser.get(url, timeout=10).text
        assert browser.post(url + "simulator", data={"paused": "1"}).status_code == 403  # CSRF
