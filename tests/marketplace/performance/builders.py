"""Known data for the scorecard tests: orders shipped on time and late, valid and invalid
tracking, a seller cancellation, a refund the marketplace paused, a return waiting too
long, returns authorized after known waits, feed runs; and the figures they must give per
window (``EXPECTED``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from marketplace.catalog.models import FeedRun
from marketplace.orders.models import LineCancellation, Order, Shipment, ValidationProblem
from marketplace.returns.models import Return, ReturnLine, SellerRefund, SellerRefundLine
from sellers.models import Seller
from tests.support.factories import OrderFactory, SellerFactory

# Noon UTC: every day below is the same calendar day in UTC whatever the hour.
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def order(
    seller: Seller,
    number: str,
    *,
    placed: float,
    ship_by: float | None,
    shipped: float | None = None,
    state: str = Order.State.AWAITING_SHIPMENT,
) -> Order:
    """An order of two lines (2 x 12.50 each: 50.00), placed ``placed`` days ago, to ship by
    ``ship_by`` days ago (None: no ship window), its first line shipped ``shipped`` days ago."""
    made = OrderFactory(
        seller=seller,
        mp_order_number=number,
        purchase_date=ago(placed),
        latest_ship_date=ago(ship_by) if ship_by is not None else None,
        state=Order.State.SHIPPED if shipped is not None else state,
    )
    if shipped is not None:
        Shipment.objects.create(
            line=made.lines.get(mp_line_number="1"),
            quantity=2,
            carrier="UPS",
            tracking_number="1Z999AA10123456784",
            shipped_date=ago(shipped).date(),
        )
        # A second, later package: only the first one counts.
        Shipment.objects.create(
            line=made.lines.get(mp_line_number="2"),
            quantity=2,
            carrier="UPS",
            tracking_number="1Z999AA10123456785",
            shipped_date=ago(shipped - 0.5).date() if shipped >= 1 else ago(shipped).date(),
        )
    return made


@dataclass
class Sellers:
    alice: Seller
    bob: Seller
    carol: Seller


def known_data() -> Sellers:
    alice = SellerFactory(username="alice", display_name="Alice's Shop")
    bob = SellerFactory(username="bob", display_name="Bob's Shop")
    carol = SellerFactory(username="carol", display_name="Carol's Shop")
    # Alice, in the 7-day window:
    order(alice, "A-1", placed=3, ship_by=2, shipped=2)  # on time, 1 day to ship
    late = order(alice, "A-2", placed=5, ship_by=4, shipped=1)  # late, 4 days
    # ... whose tracking number failed our checks once (corrected since: still counts).
    ValidationProblem.objects.create(
        order=late,
        code="INVALID_TRACKING_NUMBER",
        mp_line_number="1",
        message="UPS tracking number '1Z' is not valid",
        fingerprint="f" * 64,
        last_seen_at=ago(1),
        resolved_at=NOW,
    )
    cancelled = order(alice, "A-5", placed=6, ship_by=5, state=Order.State.CANCELLED)
    LineCancellation.objects.create(
        line=cancelled.lines.get(mp_line_number="1"), quantity=2, reason="out of stock"
    )
    order(alice, "A-8", placed=1, ship_by=-1)  # not due yet
    # ... in the 30-day window:
    order(alice, "A-3", placed=10, ship_by=None, shipped=9)  # default handling: on time
    order(alice, "A-4", placed=20, ship_by=18)  # never shipped: overdue, late
    # ... in the 90-day window: refunded (paused once) and returned, the return still
    # waiting for Alice's authorization after 20 days.
    refunded = order(alice, "A-6", placed=40, ship_by=38, shipped=39)
    refund = SellerRefund.objects.create(
        seller=alice, order=refunded, refund_id="9001", status="COMPLETE", pause_count=1
    )
    SellerRefundLine.objects.create(
        refund=refund,
        mp_line_number="1",
        currency="EUR",
        item_refund=Decimal("10.00"),
        item_tax_refund=Decimal("2.00"),
        shipping_refund=Decimal("0"),
        shipping_tax_refund=Decimal("0"),
        discount_refund=Decimal("0"),
    )
    ret = Return.objects.create(
        order=refunded,
        seller=alice,
        mp_return_number="R-1",
        reason="broken",
        request_date=ago(20).date(),
        respond_date=ago(6).date(),
        intake_fingerprint="r" * 64,
    )
    ReturnLine.objects.create(
        return_request=ret,
        mp_return_line_number="1",
        order_line=refunded.lines.get(mp_line_number="1"),
        quantity=1,
        requested_refund_principal=Decimal("20.00"),
        requested_refund_tax=Decimal("4.00"),
    )
    # ... and outside every window: a late order that must not count.
    old = order(alice, "A-7", placed=100, ship_by=99, shipped=90)
    # Alice's answered returns, placed in a window by their request day (not by their
    # order's purchase: all are on A-7, outside every window, so the after-sale figures
    # do not move). Waits in UTC calendar days, request day to the day first seen
    # authorized: 1 and 3 days (7-day window), 10 (30), 5 (90), 1 outside every window.
    for number, requested, authorized, status in (
        ("R-2", 3, 2.0, "AUTHORIZED"),
        ("R-3", 6, 2.54, "REFUNDED"),  # at 23:02 UTC: still the 17th, 3 days after the 14th
        ("R-4", 20, 10.0, "COMPLETED"),
        ("R-5", 60, 55.0, "COMPLETED"),
        ("R-6", 100, 99.0, "COMPLETED"),  # requested before every window
        ("R-7", 4, None, "REJECTED"),  # refused: never authorized, not waiting
        ("R-8", 10, None, "COMPLETED"),  # authorized before authorized_at existed
    ):
        Return.objects.create(
            order=old,
            seller=alice,
            mp_return_number=number,
            reason="broken",
            request_date=ago(requested).date(),
            respond_date=ago(requested - 14).date(),
            intake_fingerprint=number.ljust(64, "r"),
            status=status,
            authorized_at=ago(authorized) if authorized is not None else None,
        )
    # Alice's feed runs: 5 of 100 rows refused 3 days ago, 45 of 100 50 days ago; a failed
    # run's rows were never judged.
    for received, rows, rejected, status in (
        (3, 100, 5, FeedRun.Status.SUCCEEDED),
        (50, 100, 45, FeedRun.Status.HELD),
        (2, 10, 10, FeedRun.Status.FAILED),
    ):
        run = FeedRun.objects.create(
            seller=alice, status=status, rows=rows, rejected=rejected, file_path="x"
        )
        FeedRun.objects.filter(pk=run.pk).update(received_at=ago(received))
    # Bob: one order, shipped on time.
    order(bob, "B-1", placed=2, ship_by=1, shipped=1)
    return Sellers(alice=alice, bob=bob, carol=carol)


# Alice's figures per window (counts exact; rates and days compared with approx).
EXPECTED = {
    7: {
        "orders": 4,
        "ship_due": 2,
        "shipped_late": 1,
        "late_rate": 0.5,
        "shipped": 2,
        "tracking_invalid": 1,
        "valid_tracking_rate": 0.5,
        "seller_cancelled": 1,
        "cancel_rate": 0.25,
        "ship_days_median": 2.5,
        "ship_days_p90": 3.7,
        "order_amount": Decimal("200"),
        "refunded_orders": 0,
        "refund_rate": 0.0,
        "refunds": 0,
        "refunds_paused": 0,
        "paused_refund_rate": None,
        "returned_orders": 0,
        "returns_waiting": 0,
        "returns_overdue": 0,
        "oldest_waiting_request": None,
        # waited 1 and 3 days.
        "returns_authorized": 2,
        "authorization_days_median": 2.0,
        "authorization_days_p90": 2.8,
        "feed_runs": 1,
        "listing_rows": 100,
        "listing_refused": 5,
        "listing_refusal_rate": 0.05,
    },
    30: {
        "orders": 6,
        "ship_due": 4,
        "shipped_late": 2,
        "late_rate": 0.5,
        "shipped": 3,
        "tracking_invalid": 1,
        "valid_tracking_rate": 2 / 3,
        "seller_cancelled": 1,
        "cancel_rate": 1 / 6,
        "ship_days_median": 1.0,
        "ship_days_p90": 3.4,
        "order_amount": Decimal("300"),
        "refunded_orders": 0,
        "returns_waiting": 1,
        "returns_overdue": 1,
        "oldest_waiting_request": ago(20).date(),
        # and R-4, 10 days: 1, 3, 10.
        "returns_authorized": 3,
        "authorization_days_median": 3.0,
        "authorization_days_p90": 8.6,
        "feed_runs": 1,
        "listing_refusal_rate": 0.05,
    },
    90: {
        "orders": 7,
        "ship_due": 5,
        "shipped_late": 2,
        "late_rate": 0.4,
        "shipped": 4,
        "tracking_invalid": 1,
        "valid_tracking_rate": 0.75,
        "seller_cancelled": 1,
        "cancel_rate": 1 / 7,
        "ship_days_median": 1.0,
        "ship_days_p90": 3.1,
        "order_amount": Decimal("350"),
        "refunded_orders": 1,
        "refund_rate": 1 / 7,
        "refund_amount": Decimal("12"),
        "refund_amount_rate": 12 / 350,
        "refunds": 1,
        "refunds_paused": 1,
        "paused_refund_rate": 1.0,
        "returned_orders": 1,
        "return_rate": 1 / 7,
        "return_amount": Decimal("24"),
        "return_amount_rate": 24 / 350,
        "returns_waiting": 1,
        "returns_overdue": 1,
        "oldest_waiting_request": ago(20).date(),
        # and R-5, 5 days: 1, 3, 5, 10.
        "returns_authorized": 4,
        "authorization_days_median": 4.0,
        "authorization_days_p90": 8.5,
        "feed_runs": 2,
        "listing_rows": 200,
        "listing_refused": 50,
        "listing_refusal_rate": 0.25,
    },
}
