"""A reconciliation pass over real HTTP with the real sandbox: each drift of an order is
found and repaired within one pass, and a seller with nothing open costs no call."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from marketplace.orders.models import Order, OrderSync
from marketplace.orders.services.push import order_push
from marketplace.reconcile import kinds
from marketplace.reconcile.models import Finding, ReconcileRun, RunTrigger
from marketplace.reconcile.seller_pass import SKIPPED_LEASE_HELD, seller_reconcile
from marketplace.sync.lease import lease_claim
from marketplace.sync.models import SellerSync
from marketplace.sync.pull import seller_pull
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


def test_an_order_the_platform_lost_is_pushed_again(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given an order our outbox holds as pushed, which the platform does not have
    order = make_order("MP-LOST")
    OrderSync.objects.filter(order=order).update(
        status=OrderSync.Status.SYNCED, pushed_version=1, next_attempt_at=None
    )
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.ORDER_MISSING, "MP-LOST", "resent")]
    sync = OrderSync.objects.get(order=order)
    assert (sync.status, sync.desired_version) == ("pending", 2)
    # the outbox sends it: the platform has it now, and the next pass finds nothing
    assert order_push(order_id=order.id) == "synced"
    assert platform.order("MP-LOST")["marketplace_state"] == "AWAITING_SHIPMENT"
    assert reconcile(connected_seller).findings_count == 0


def test_an_older_state_at_the_platform_is_pushed_again(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given an order pushed PENDING, then paid here (AWAITING_SHIPMENT), and our push of
    # that recorded as sent though the platform never got it
    order = placed("MP-OLD", marketplace_state="PENDING")
    Order.objects.filter(pk=order.pk).update(state="AWAITING_SHIPMENT")
    OrderSync.objects.filter(order=order).update(desired_version=2, pushed_version=2)
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.ORDER_STATE_BEHIND, "MP-OLD", "resent")]
    finding = run.findings.get()
    assert finding.ours == {"state": "AWAITING_SHIPMENT"}
    assert finding.theirs["marketplace_state"] == "PENDING"
    assert order_push(order_id=order.id) == "synced"
    assert platform.order("MP-OLD")["marketplace_state"] == "AWAITING_SHIPMENT"


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
