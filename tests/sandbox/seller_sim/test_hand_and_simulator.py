"""A person shipping by hand and the simulated seller process never fight: the simulator
ships only what is left of each line (read from v2 before it acts), whether the person
shipped while it was paused or during its shipping delay, and never gives up on the order.
The simulator runs as its own process (``python -m sandbox.seller_sim``) over HTTP."""

from __future__ import annotations

import time

import pytest

from tests.sandbox.conftest import Api, order_body
from tests.sandbox.orders_v2.v2_client import SellerApi, seller_api
from tests.support.sandbox_process import SandboxProcess
from tests.support.seller_sim_process import SellerSimProcess

pytestmark = pytest.mark.slow


@pytest.fixture
def seller(alice: Api, sandbox: SandboxProcess) -> SellerApi:
    return seller_api(sandbox, "alice")


def simulator(sandbox: SandboxProcess, seller: SellerApi, **options: object) -> SellerSimProcess:
    return SellerSimProcess(
        sandbox,
        seller="alice",
        api_user=seller.username,
        password=seller.password,
        client_id=seller.client_id,
        seed=5,
        **options,
    )


def wait_until(check: object, timeout: float, sim: SellerSimProcess) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out; the simulator's log:\n{sim.log_text()[-3000:]}")


def settled_lines(sandbox: SandboxProcess, number: str) -> list[tuple[int, int, int]]:
    order = sandbox.v2_order(number)
    return [(line["ordered"], line["shipped"], line["cancelled"]) for line in order["lines"]]


def test_resumed_simulator_ships_what_is_left_of_an_order_shipped_partly_by_hand(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    sandbox.set_simulator("alice", paused=True)
    with simulator(sandbox, seller, ship_delay=0.3, packages=2) as sim:
        sim.wait_for_log("paused=True", timeout=20)
        assert alice.put_order(order_body("HS-1")).status_code == 201
        sandbox.v2_import("alice")
        (order,) = seller.orders(marketplace_order_number="HS-1")
        red, blue = (line["id"] for line in order["order_lines"])  # 3 red, 1 blue
        # Paused: the order stays NEW, a person ships 2 of the 3 red by hand.
        assert seller.ship(order["id"], [(red, 2)], tracking_number="1ZHAND0000000000AA").ok
        time.sleep(1.5)
        assert seller.orders(marketplace_order_number="HS-1")[0]["merchant_order_number"] in (
            None,
            "",
        )

        sandbox.set_simulator("alice", paused=False)
        wait_until(lambda: settled_lines(sandbox, "HS-1") == [(3, 3, 0), (1, 1, 0)], 30, sim)
        log = sim.log_text()
    assert "confirmed order" in log
    assert "1 package(s) already made, shipping the 2 unit(s) left" in log
    assert "giving up" not in log
    assert "refused" not in log
    packages = sandbox.v2_order("HS-1")["fulfillments"]
    hand, *made = packages
    assert hand["shipment"]["tracking_number"] == "1ZHAND0000000000AA"
    assert sorted(
        (fl["line_id"], fl["quantity"]) for p in made for fl in p["fulfillment_lines"]
    ) == [
        (red, 1),
        (blue, 1),
    ]
    assert sandbox.v2_order("HS-1")["service_status"] == "COMPLETE"


def test_a_hand_shipment_during_the_shipping_delay_leaves_the_simulator_the_rest(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    with simulator(sandbox, seller, ship_delay=4) as sim:
        assert alice.put_order(order_body("HS-2")).status_code == 201
        sandbox.v2_import("alice")
        sim.wait_for_log("(HS-2) ready", timeout=20)  # planned: ships in 4 s
        (order,) = seller.orders(marketplace_order_number="HS-2")
        red = order["order_lines"][0]["id"]
        assert seller.ship(order["id"], [(red, 3)]).ok  # all the red ones, by hand
        wait_until(lambda: settled_lines(sandbox, "HS-2") == [(3, 3, 0), (1, 1, 0)], 30, sim)
        # A person completing an order by hand leaves the simulator nothing to do.
        assert alice.put_order(order_body("HS-3")).status_code == 201
        sandbox.v2_import("alice")
        sim.wait_for_log("(HS-3) ready", timeout=20)
        (third,) = seller.orders(marketplace_order_number="HS-3")
        lines = [(line["id"], line["quantity"]) for line in third["order_lines"]]
        assert seller.ship(third["id"], lines).ok
        sim.wait_for_log(f"order {third['id']} (HS-3): nothing left to ship", timeout=20)
        log = sim.log_text()
    assert "shipping the 1 unit(s) left" in log
    assert "giving up" not in log
    assert [len(p["fulfillment_lines"]) for p in sandbox.v2_order("HS-2")["fulfillments"]] == [
        1,
        1,
    ]
    assert len(sandbox.v2_order("HS-3")["fulfillments"]) == 1
