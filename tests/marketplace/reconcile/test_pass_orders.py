"""A reconciliation pass over real HTTP with the real sandbox: each drift of an order is
found and repaired within one pass, and a seller with nothing open costs no call."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import pytest
from django.utils import timezone

from marketplace.orders.models import Order, OrderSync, Shipment
from marketplace.orders.services.push import order_push
from marketplace.reconcile import kinds
from marketplace.reconcile.models import Finding, ReconcileRun, RunTrigger
from marketplace.reconcile.seller_pass import SKIPPED_LEASE_HELD, seller_reconcile
from marketplace.sync.models import SellerSync
from marketplace.sync.pull import seller_pull
from marketplace.sync.pull_lease import lease_claim
from sellers.token_source import order_client_for_seller
from tests.marketplace.conftest import make_order
from tests.support.app_fixtures import PLATFORM_SELLER, Platform

pytestmark = pytest.mark.django_db


def placed(number: str, **overrides: Any) -> Order:
    order = make_order(number, **overrides)
    assert order_push(order_id=order.id) == "synced"
    return order


def last_seq(platform: Platform) -> int:
    entries = platform.requests(limit=1)
    return entries[-1]["seq"] if entries else 0


def reconcile(seller: Any) -> ReconcileRun:
    return seller_reconcile(seller_id=seller.id, trigger=RunTrigger.COMMAND)


def found(run: ReconcileRun) -> list[tuple[str, str, str]]:
    return list(run.findings.order_by("id").values_list("kind", "object_key", "action"))


def test_a_seller_with_nothing_open_costs_no_platform_call(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given a seller whose only order is shipped (closed) and on the platform
    order = placed("MP-CLOSED")
    Order.objects.filter(pk=order.pk).update(state="SHIPPED")
    since = last_seq(platform)
    # When a pass runs
    run = reconcile(connected_seller)
    # Then it asked the platform nothing, and found nothing
    assert (run.error, run.platform_calls, run.findings_count, run.compared) == ("", 0, 0, {})
    assert platform.requests(since_seq=since) == []


def test_an_order_in_step_with_the_platform_finds_nothing_in_one_listing(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    placed("MP-SAME")
    since = last_seq(platform)
    run = reconcile(connected_seller)
    assert (run.error, run.findings_count, run.compared) == ("", 0, {"orders": 1})
    paths = [(r["method"], r["path"]) for r in platform.requests(since_seq=since)]
    # one orders listing and one refunds listing (no return of ours: no returns listing)
    assert paths == [("GET", "/api/v1/orders"), ("GET", "/api/v1/refunds")]
    assert run.platform_calls == 2


def drift(platform: Platform, number: str, kind: str, **body: Any) -> dict[str, Any]:
    """A change made at the platform elsewhere: no update time moves (the pull misses it)."""
    return platform.sandbox.control("POST", f"/orders/{number}/drift", {"kind": kind, **body})


@pytest.mark.parametrize("reading", ["A", "B"], ids=["unknown-absent", "unknown-refused"])
def test_an_order_the_platform_lost_is_pushed_again(
    platform: Platform, connected_seller: Any, quiet_broker: Any, reading: str
) -> None:
    # Given two pushed orders, one of which the platform loses (under reading B a listing
    # naming it is refused: each order of that page is then read on its own)
    platform.sandbox.readings(unknown_order_numbers=reading)
    order = placed("MP-LOST")
    placed("MP-KEPT")
    drift(platform, "MP-LOST", "forget_order")
    run = reconcile(connected_seller)
    assert run.error == ""
    assert found(run) == [(kinds.ORDER_MISSING, "MP-LOST", "resent")]
    sync = OrderSync.objects.get(order=order)
    assert (sync.status, sync.desired_version) == ("pending", 2)
    # the outbox sends it: the platform has it again, and the next pass finds nothing
    assert order_push(order_id=order.id) == "synced"
    assert platform.order("MP-LOST")["marketplace_state"] == "AWAITING_SHIPMENT"
    assert reconcile(connected_seller).findings_count == 0


def test_an_order_update_the_platform_lost_is_pushed_again(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given an order pushed PENDING then AWAITING_SHIPMENT, and the platform loses the
    # second update
    order = placed("MP-FORGOT", marketplace_state="PENDING")
    Order.objects.filter(pk=order.pk).update(state="AWAITING_SHIPMENT")
    OrderSync.objects.filter(order=order).update(desired_version=2, status="pending")
    assert order_push(order_id=order.id) == "synced"
    drift(platform, "MP-FORGOT", "forget_update")
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.ORDER_STATE_BEHIND, "MP-FORGOT", "resent")]
    finding = run.findings.get()
    assert finding.ours == {"state": "AWAITING_SHIPMENT"}
    assert finding.theirs["marketplace_state"] == "PENDING"
    assert order_push(order_id=order.id) == "synced"
    assert platform.order("MP-FORGOT")["marketplace_state"] == "AWAITING_SHIPMENT"
    assert reconcile(connected_seller).findings_count == 0


def test_a_state_changed_at_the_platform_goes_to_staff(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given support cancelled an order at the platform that we hold awaiting shipment
    placed("MP-SUPPORT")
    drift(platform, "MP-SUPPORT", "order_state", marketplace_state="CANCELLED")
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.ORDER_STATE_CONFLICT, "MP-SUPPORT", "staff")]
    finding = run.findings.get()
    assert (finding.status, finding.ours, finding.theirs["marketplace_state"]) == (
        "open",
        {"state": "AWAITING_SHIPMENT"},
        "CANCELLED",
    )
    # nothing was pushed over the platform's version
    assert OrderSync.objects.get(order__mp_order_number="MP-SUPPORT").desired_version == 1


def test_a_state_we_never_sent_goes_to_staff(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given the platform holds AWAITING_SHIPMENT while we hold PENDING (both moved)
    order = placed("MP-BOTH")
    Order.objects.filter(pk=order.pk).update(state="PENDING")
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.ORDER_STATE_CONFLICT, "MP-BOTH", "staff")]
    assert run.findings.get().status == "open"
    # a second pass does not add a second open finding
    assert reconcile(connected_seller).findings_count == 0
    assert Finding.objects.filter(kind=kinds.ORDER_STATE_CONFLICT).count() == 1


def test_fulfillments_we_have_not_read_force_the_next_pull(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given the seller shipped an order at the platform, and we have not read it yet
    placed("MP-SHIPPED-THERE")
    platform.sandbox.ship("MP-SHIPPED-THERE")
    SellerSync.objects.filter(seller=connected_seller).update(
        next_pull_at=timezone.now() + timezone.timedelta(hours=1)
    )
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.FULFILLMENT_BEHIND, "MP-SHIPPED-THERE", "pull_forced")]
    sync = SellerSync.objects.get(seller=connected_seller)
    assert sync.retry_numbers == ["MP-SHIPPED-THERE"]
    assert sync.next_pull_at <= timezone.now()
    assert (sync.claim_token, sync.lease_until) == ("", None)
    # the next pull reads it
    seller_pull(seller_id=connected_seller.id)
    order = Order.objects.get(mp_order_number="MP-SHIPPED-THERE")
    assert order.state == "SHIPPED"
    assert SellerSync.objects.get(seller=connected_seller).retry_numbers == []


@pytest.mark.parametrize(
    "change",
    [
        {
            "kind": "fulfillment_alter",
            "mp_line_number": "1",
            "tracking_number": "1Z999AA10123456784",
        },
        {"kind": "fulfillment_drop", "mp_line_number": "2"},
    ],
    ids=["altered", "dropped"],
)
def test_a_shipment_changed_at_the_platform_is_read_by_the_next_pull(
    platform: Platform, connected_seller: Any, quiet_broker: Any, change: dict[str, Any]
) -> None:
    # Given an order shipped in two parcels (line 1, line 2), read by our pull
    placed("MP-PARCELS", marketplace_state="AWAITING_SHIPMENT")
    placed("MP-OPEN-TOO")
    platform.sandbox.ship("MP-PARCELS", lines=[{"mp_line_number": "1", "quantity": 3}])
    platform.sandbox.ship("MP-PARCELS", lines=[{"mp_line_number": "2", "quantity": 1}])
    seller_pull(seller_id=connected_seller.id)
    before = Order.objects.get(mp_order_number="MP-PARCELS").fulfillment_digest
    # When the platform changes a shipment (no update time moves: the pull misses it; the
    # cursor moved past the cursor overlap, which would list the order again by chance)
    drift(platform, "MP-PARCELS", **change)
    SellerSync.objects.filter(seller=connected_seller).update(
        cursor=timezone.now() + timezone.timedelta(minutes=10)
    )
    seller_pull(seller_id=connected_seller.id)
    assert Order.objects.get(mp_order_number="MP-PARCELS").fulfillment_digest == before
    # Then a pass finds it, and the next pull reads it
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.FULFILLMENT_BEHIND, "MP-PARCELS", "pull_forced")]
    seller_pull(seller_id=connected_seller.id)
    order = Order.objects.get(mp_order_number="MP-PARCELS")
    assert order.fulfillment_digest != before
    trackings = sorted(s.tracking_number for s in Shipment.objects.filter(line__order=order))
    client = order_client_for_seller(connected_seller)
    theirs = client.get_fulfillments("MP-PARCELS")["fulfillments"]
    assert trackings == sorted(
        shipment["tracking_number"] for line in theirs for shipment in line["shipments"]
    )
    assert reconcile(connected_seller).findings_count == 0


def test_a_pass_is_skipped_while_a_pull_holds_the_lease(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    placed("MP-HELD")
    assert lease_claim(seller_id=connected_seller.id) is not None
    since = last_seq(platform)
    run = reconcile(connected_seller)
    assert (run.error, run.platform_calls) == (SKIPPED_LEASE_HELD, 0)
    assert platform.requests(since_seq=since) == []


def test_a_failed_listing_ends_the_pass_with_its_error_and_repairs_nothing(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    order = placed("MP-REFUSED", marketplace_state="PENDING")
    Order.objects.filter(pk=order.pk).update(state="AWAITING_SHIPMENT")
    OrderSync.objects.filter(order=order).update(desired_version=2, pushed_version=2)
    platform.sandbox.set_faults(endpoint="list_orders", kind="500", count=1)
    run = reconcile(connected_seller)
    assert run.error.startswith("Platform"), run.error
    assert (run.platform_calls, run.findings_count) == (1, 0)
    assert OrderSync.objects.get(order=order).desired_version == 2
    # the lease is given back
    assert SellerSync.objects.get(seller=connected_seller).claim_token == ""


def test_a_revoked_grant_ends_the_pass_with_its_error(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    placed("MP-REVOKED")
    platform.sandbox.revoke(PLATFORM_SELLER)
    run = reconcile(connected_seller)
    assert run.error, run
    assert run.findings_count == 0


def test_one_object_that_cannot_be_compared_does_not_stop_the_others(
    platform: Platform, connected_seller: Any, quiet_broker: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two orders the platform lost, and a bug that breaks the comparison of the first
    from marketplace.reconcile import seller_pass

    placed("MP-BUG")
    placed("MP-FINE")
    drift(platform, "MP-BUG", "forget_order")
    drift(platform, "MP-FINE", "forget_order")
    real = seller_pass.order_compare

    def compare(state: Any, order: Order) -> None:
        if order.mp_order_number == "MP-BUG":
            raise ValueError("a bug")
        real(state, order)

    monkeypatch.setattr(seller_pass, "order_compare", compare)
    run = reconcile(connected_seller)
    # Then the other order is compared and repaired, and the failure is counted on the run
    assert run.error == ""
    assert found(run) == [(kinds.ORDER_MISSING, "MP-FINE", "resent")]
    assert run.compared == {"orders": 1, "errors": 1}


def test_open_orders_are_listed_fifty_numbers_a_request(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given 51 open orders on the platform
    for index in range(51):
        placed(f"MP-MANY-{index:02d}")
    since = last_seq(platform)
    run = reconcile(connected_seller)
    assert (run.error, run.findings_count, run.compared) == ("", 0, {"orders": 51})
    calls = platform.requests(since_seq=since)
    # Then two orders listings (50 numbers, then 1) and two refunds listings, no more
    assert [c["path"] for c in calls] == ["/api/v1/orders"] * 2 + ["/api/v1/refunds"] * 2
    counts = []
    for call in calls:
        numbers = next(
            value for key, value in parse_qsl(call["query"]) if key == "mp_order_numbers"
        )
        counts.append(len(numbers.split(",")))
    assert counts == [50, 1, 50, 1]
    assert run.platform_calls == 4
    assert platform.sandbox.violations()["total"] == 0
