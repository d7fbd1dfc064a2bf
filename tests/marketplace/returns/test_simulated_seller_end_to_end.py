"""End to end with the simulated seller's own process (v2, its after-sale desk), the
sandbox, and the marketplace's Celery worker: orders placed through intake are shipped by
the simulator; a return created through intake is authorized and refunded by it (or
refused: left awaiting authorization under reading A, REJECTED under B), its seller
refunds of shipped lines are read, checked and answered; an over-refund is paused, and
the simulator corrects it (then it is decided again and paid once) or leaves it paused
(unpaid)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from marketplace.orders.models import Order, OrderSync
from marketplace.returns.models import RefundLedgerEntry, Return, SellerRefund
from marketplace.sync.fan_out import sellers_after_sale_pull_fan_out
from marketplace.sync.pull import seller_pull
from tests.marketplace.conftest import order_body, wait_for
from tests.support.app_fixtures import PLATFORM_SELLER, Platform
from tests.support.seller_sim_process import SellerSimProcess

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
API_USER, API_PASSWORD, API_CLIENT = "alice-shop-erp", "alice-shop-erp-pass", "770001"


@pytest.fixture(autouse=True)
def no_violations(platform: Platform) -> Iterator[None]:
    yield
    violations = platform.sandbox.violations()
    assert violations["total"] == 0, violations


@pytest.fixture
def v2_seller(platform: Platform) -> Platform:
    platform.sandbox.create_api_user(PLATFORM_SELLER, API_USER, API_PASSWORD, API_CLIENT)
    platform.sandbox.v2_settings(PLATFORM_SELLER, import_interval_seconds=0.3)
    return platform


def simulator(platform: Platform, **options: Any) -> SellerSimProcess:
    return SellerSimProcess(
        platform.sandbox,
        seller=PLATFORM_SELLER,
        api_user=API_USER,
        password=API_PASSWORD,
        client_id=API_CLIENT,
        seed=7,
        ship_delay=0.3,
        return_arrival=0.5,
        seller_refund_delay=0.5,
        paused_refund_fix_delay=0.3,
        **options,
    )


def _shipped(number: str) -> bool:
    order = Order.objects.filter(mp_order_number=number).select_related("sync").first()
    if order is None:
        return False
    # Pull now (the schedule would wait an interval between pulls of a busy seller).
    seller_pull(seller_id=order.seller_id)
    order = Order.objects.select_related("sync").get(pk=order.pk)
    return order.state == "SHIPPED" and order.sync.status == OrderSync.Status.SYNCED


def _place_shipped(api: Client, number: str, sim: SellerSimProcess) -> None:
    response = api.post(
        "/api/intake/orders", data=json.dumps(order_body(number)), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    wait_for(lambda: _shipped(number), timeout=40, what="shipped", explain=sim.log_text)


def _return(api: Client, number: str) -> None:
    body = {
        "mp_return_number": "RET-1",
        "reason": "arrived broken",
        "return_lines": [{"mp_line_number": "1", "quantity": 1}],
    }
    response = api.post(
        f"/api/intake/orders/{number}/returns",
        data=json.dumps(body),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content


def _settled(predicate: Any) -> Any:
    sellers_after_sale_pull_fan_out()
    return predicate()


def test_the_simulator_authorizes_and_refunds_a_return_and_refunds_a_line_within_its_cost(
    v2_seller: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    with simulator(
        v2_seller, return_reject_rate=0.0, seller_refund_rate=1.0, over_refund_rate=0.0
    ) as sim:
        _place_shipped(api, "MP-SIM-R1", sim)
        _return(api, "MP-SIM-R1")

        def done() -> bool:
            ret = Return.objects.filter(order__mp_order_number="MP-SIM-R1").first()
            refund = SellerRefund.objects.filter(order__mp_order_number="MP-SIM-R1").first()
            return bool(
                ret and ret.status == "COMPLETED" and refund and refund.status == "COMPLETE"
            )

        wait_for(
            lambda: _settled(done),
            timeout=60,
            what="return and refund completed",
            explain=sim.log_text,
        )
    ret = Return.objects.get(order__mp_order_number="MP-SIM-R1")
    assert ret.rma.startswith("RMA-")
    line = ret.lines.get()
    # The simulator refunds what the buyer asked: principal + tax, no shipping.
    expected = line.requested_refund_principal + line.requested_refund_tax
    assert RefundLedgerEntry.objects.get(return_request=ret).amount == expected
    refund = SellerRefund.objects.get(order__mp_order_number="MP-SIM-R1")
    assert refund.decision == "accepted"
    assert RefundLedgerEntry.objects.get(refund=refund).amount == sum(
        item.takes for item in refund.lines.all()
    )


def test_the_simulator_rejects_a_return_and_its_over_refund_is_paused_and_not_paid(
    v2_seller: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    v2_seller.sandbox.readings(return_refusal="B")  # a refusal is a state only under B
    with simulator(
        v2_seller,
        return_reject_rate=1.0,
        seller_refund_rate=1.0,
        over_refund_rate=1.0,
        paused_refund_fix_rate=0.0,
    ) as sim:
        _place_shipped(api, "MP-SIM-R2", sim)
        _return(api, "MP-SIM-R2")

        def done() -> bool:
            ret = Return.objects.filter(order__mp_order_number="MP-SIM-R2").first()
            refund = SellerRefund.objects.filter(order__mp_order_number="MP-SIM-R2").first()
            return bool(ret and ret.status == "REJECTED" and refund and refund.status == "PAUSED")

        wait_for(
            lambda: _settled(done), timeout=60, what="rejected and refused", explain=sim.log_text
        )
    refund = SellerRefund.objects.get(order__mp_order_number="MP-SIM-R2")
    assert [e["code"] for e in refund.errors] == ["EXCESS_ITEM_REFUND"]
    assert not RefundLedgerEntry.objects.exists()
    assert Return.objects.get(order__mp_order_number="MP-SIM-R2").notes


def test_the_simulator_corrects_a_paused_over_refund_which_is_then_paid_once(
    v2_seller: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    """Reading A: the simulator's refusal of the return leaves it awaiting authorization
    (no state says so); its over-refund is paused, corrected, decided again and paid."""
    with simulator(
        v2_seller,
        return_reject_rate=1.0,
        seller_refund_rate=1.0,
        over_refund_rate=1.0,
        paused_refund_fix_rate=1.0,
    ) as sim:
        _place_shipped(api, "MP-SIM-R3", sim)
        _return(api, "MP-SIM-R3")

        def done() -> bool:
            refund = SellerRefund.objects.filter(order__mp_order_number="MP-SIM-R3").first()
            return bool(refund and refund.status == "COMPLETE")

        wait_for(
            lambda: _settled(done), timeout=60, what="corrected and paid", explain=sim.log_text
        )
    refund = SellerRefund.objects.get(order__mp_order_number="MP-SIM-R3")
    assert (refund.decision, refund.pause_count, refund.version) == ("accepted", 1, 2)
    assert [e["code"] for e in refund.errors] == ["EXCESS_ITEM_REFUND"]  # the last reported
    entries = RefundLedgerEntry.objects.filter(refund=refund)
    assert sum(e.amount for e in entries) == sum(line.takes for line in refund.lines.all())
    ret = Return.objects.get(order__mp_order_number="MP-SIM-R3")
    assert (ret.status, ret.decision) == ("AWAITING_AUTHORIZATION", "")
