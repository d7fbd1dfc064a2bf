"""The simulated seller's after-sale desk, as its own process over HTTP: it authorizes and
later refunds returns (or rejects them), and refunds shipped lines on its own, within or
over the line's cost, as its rates say (1 and 0 make it deterministic)."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from tests.sandbox.conftest import Api, order_body
from tests.sandbox.order_source.after_sale_helpers import (
    put_return,
    return_body,
    return_line,
    shipped_order,
)
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
        seed=3,
        ship_delay=0.2,
        **options,
    )


def wait_for(check: object, sim: SellerSimProcess, timeout: float = 20) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()  # type: ignore[operator]
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out; the simulator's log:\n{sim.log_text()[-3000:]}")


def test_it_authorizes_then_refunds_returns_as_requested(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "SIM-R1")
    with simulator(sandbox, seller, return_reject_rate=0, return_arrival=0.5) as sim:
        assert put_return(alice, "SIM-R1", "RET-1", return_body()).status_code == 200
        path = "/orders/SIM-R1/returns/RET-1/refunds"

        def refunded() -> dict | None:
            view = alice.call("GET", path).json()
            return view if view["status"] == "REFUNDED" else None

        view = wait_for(refunded, sim)
        assert isinstance(view, dict)
        assert view["rma"].startswith("RMA-alice-")
        assert view["merchant_refund_lines"] == [
            {
                "mp_return_line_number": "R1",
                "principal_refund_amount": 13.33,
                "shipping_refund_amount": 0,
            }
        ]
        assert "authorized" in sim.log_text()
        # A preauthorized return is refunded without an authorization.
        body = return_body(return_line(mp_return_line_number="P1", preauthorized=True))
        assert put_return(alice, "SIM-R1", "RET-2", body).status_code == 200
        second = "/orders/SIM-R1/returns/RET-2"
        wait_for(lambda: alice.call("GET", second).json()["status"] == "REFUNDED", sim)
        assert alice.call("GET", second).json()["rma"] is None
    assert sandbox.violations()["total"] == 0


def test_it_refuses_at_rate_one_under_each_reading(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "SIM-R2")
    with simulator(sandbox, seller, return_reject_rate=1) as sim:
        # Reading A: a refusal has no state; the return just stays unauthorized.
        assert put_return(alice, "SIM-R2", "RET-1", return_body()).status_code == 200
        sim.wait_for_log("refused, left unauthorized", timeout=20)
        path = "/orders/SIM-R2/returns/RET-1"
        view = alice.call("GET", path).json()
        assert (view["status"], view["notes"]) == ("AWAITING_AUTHORIZATION", None)
        # Reading B: REJECTED with the reason in notes.
        sandbox.readings(return_refusal="B")
        second = return_body(return_line(mp_return_line_number="R2", quantity=1))
        assert put_return(alice, "SIM-R2", "RET-2", second).status_code == 200
        path = "/orders/SIM-R2/returns/RET-2"
        wait_for(lambda: alice.call("GET", path).json()["status"] == "REJECTED", sim)
        assert alice.call("GET", path).json()["notes"] == "the item was returned used"
    assert sandbox.violations()["total"] == 0


EXCESS = [{"code": "EXCESS_ITEM_REFUND", "message": "line 1: 53.00 over 43.00"}]


def _over_refund(sandbox: SandboxProcess, number: str) -> str:
    made = sandbox.seller_refund(
        number,
        {"mp_line_number": "1", "refund_reason": "price_error", "item_refund": "53.00"},
    )
    return f"/orders/{number}/refunds/{made['feedamp_refund_id']}"


def test_it_corrects_paused_refunds_even_twice(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "SIM-P1")
    path = _over_refund(sandbox, "SIM-P1")
    with simulator(sandbox, seller, paused_refund_fix_rate=1, paused_refund_fix_delay=0.2) as sim:
        assert alice.call("GET", path).json()["status"] == "CREATED"
        assert alice.call("POST", path + "/errors", json=EXCESS).status_code == 200

        def created() -> dict | None:
            view = alice.call("GET", path).json()
            return view if view["status"] == "CREATED" else None

        fixed = wait_for(created, sim)
        assert isinstance(fixed, dict)
        assert fixed["errors"] == []
        # Fitted: 3 x 12.50 + 2.50 tax + 4.00 shipping - 1.00 discount = 43.00.
        assert fixed["merchant_refund_lines"][0]["item_refund"] == 43
        assert "corrected to fit what the buyer paid" in sim.log_text()
        # Paused again (another rule of the marketplace's): corrected again.
        again = [{"code": "OTHER", "message": "reason code not accepted"}]
        assert alice.call("POST", path + "/errors", json=again).status_code == 200
        assert alice.call("GET", path).json()["status"] == "PAUSED"
        wait_for(created, sim)
    (record,) = sandbox.refunds(seller="alice")
    assert (record["pauses"], record["resolutions"]) == (2, 2)
    assert alice.call("POST", path + "/complete", json={}).json()["status"] == "COMPLETE"
    assert sandbox.violations()["total"] == 0


def test_a_paused_refund_it_does_not_correct_stays_paused(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "SIM-P2")
    path = _over_refund(sandbox, "SIM-P2")
    with simulator(sandbox, seller, paused_refund_fix_rate=0, paused_refund_fix_delay=0) as sim:
        assert alice.call("POST", path + "/errors", json=EXCESS).status_code == 200
        sim.wait_for_log("paused, left as it is", timeout=20)
        time.sleep(1.5)  # a few more cycles: it never comes back to it
        view = alice.call("GET", path).json()
        assert (view["status"], view["errors"]) == ("PAUSED", EXCESS)
    assert sandbox.refunds(seller="alice")[0]["resolutions"] == 0


@pytest.mark.parametrize("over", [0, 1])
def test_it_refunds_shipped_lines_on_its_own(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, over: int
) -> None:
    with simulator(
        sandbox,
        seller,
        seller_refund_rate=1,
        over_refund_rate=over,
        seller_refund_delay=0.2,
    ) as sim:
        assert alice.put_order(order_body("SIM-F1")).status_code == 201
        sandbox.v2_import("alice")
        found = wait_for(lambda: alice.call("GET", "/orders/SIM-F1/refunds").json()["refunds"], sim)
        assert isinstance(found, list)
    (refund,) = found
    (line,) = refund["merchant_refund_lines"]
    placed = {line["mp_line_number"]: line for line in order_body("SIM-F1")["order_lines"]}
    ordered = placed[line["mp_line_number"]]
    cost = int(ordered["quantity"]) * Decimal(str(ordered["unit_price"]))
    cost += sum(Decimal(t["amount"]) for t in ordered.get("taxes", []))
    cost += Decimal(ordered.get("shipping_price") or 0)
    cost -= sum(Decimal(d["amount"]) for d in ordered.get("discounts", []))
    taken = Decimal(str(line["item_refund"]))
    assert (taken > cost) is bool(over)
    assert refund["status"] == "CREATED"
    assert line["currency"] == "EUR"


def test_rates_of_zero_do_nothing(alice: Api, seller: SellerApi, sandbox: SandboxProcess) -> None:
    with simulator(sandbox, seller, seller_refund_rate=0, no_returns=True) as sim:
        assert alice.put_order(order_body("SIM-F2")).status_code == 201
        sandbox.v2_import("alice")
        sim.wait_for_log("shipped package", timeout=20)
        assert put_return(alice, "SIM-F2", "RET-1", return_body()).status_code == 200
        time.sleep(1.5)
    assert alice.call("GET", "/orders/SIM-F2/refunds").json()["refunds"] == []
    assert alice.call("GET", "/orders/SIM-F2/returns/RET-1").json()["status"] == (
        "AWAITING_AUTHORIZATION"
    )
