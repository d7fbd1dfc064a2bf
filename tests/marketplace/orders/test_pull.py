"""Pulling fulfillments from the sandbox: store, validate, report once, settle, push."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from marketplace.orders.models import (
    Order,
    Shipment,
    SyncEvent,
    ValidationProblem,
)
from marketplace.orders.services.fulfillment import order_fulfillment_apply, order_fulfillment_pull
from marketplace.orders.services.push import order_push
from marketplace.platform.models import PlatformCall
from marketplace.sync.models import SellerSync
from marketplace.sync.pull import seller_pull
from tests.marketplace.conftest import BrokerRecorder, make_order
from tests.support.app_fixtures import PLATFORM_SELLER_B, Platform

pytestmark = pytest.mark.django_db


def placed(number: str, **overrides: Any) -> Order:
    order = make_order(number, **overrides)
    assert order_push(order_id=order.id) == "synced"
    return order


def line_totals(order: Order) -> dict[str, tuple[int, int]]:
    return {
        line.mp_line_number: (
            sum(s.quantity for s in line.shipments.all()),
            sum(c.quantity for c in line.cancellations.all()),
        )
        for line in order.lines.all()
    }


def test_whole_shipment_is_stored_settled_and_shipped_pushed(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    order = placed("MP-SHIP")
    platform.sandbox.ship("MP-SHIP", carrier="FedEx")
    result = seller_pull(seller_id=connected_seller.id).orders
    assert (result.ran, result.changed, result.settled, result.error) == (True, 1, 1, "")
    assert result.fetched == 0  # the listed order carried its fulfillments
    order.refresh_from_db()
    assert line_totals(order) == {"1": (3, 0), "2": (1, 0)}
    shipment = Shipment.objects.filter(line__order=order).first()
    assert shipment.carrier == "FedEx"
    assert len(shipment.tracking_number) == 12
    assert shipment.tracking_url
    assert shipment.shipped_date
    assert order.state == "SHIPPED"
    assert order.sync.status == "pending"
    assert order.sync.desired_version == 2
    assert order_push(order_id=order.id) == "synced"
    remote = platform.order("MP-SHIP")
    assert remote["marketplace_state"] == "SHIPPED"
    assert [h["state"] for h in remote["state_history"]] == ["AWAITING_SHIPMENT", "SHIPPED"]
    kinds = set(SyncEvent.objects.filter(order=order).values_list("kind", flat=True))
    assert {"pulled", "fulfillment_stored", "settled", "pushed"} <= kinds


def events_after(order: Order, last_id: int) -> list[tuple[str, str]]:
    return list(
        SyncEvent.objects.filter(order=order, id__gt=last_id)
        .order_by("id")
        .values_list("kind", "message")
    )


def last_event_id() -> int:
    return SyncEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0


def test_the_pull_that_reads_a_shipment_settles_the_order_and_queues_its_push(
    platform: Platform,
    connected_seller: Any,
    quiet_broker: BrokerRecorder,
    django_capture_on_commit_callbacks: Any,
) -> None:
    order = placed("MP-ONE")
    platform.sandbox.ship("MP-ONE")
    last = last_event_id()
    with django_capture_on_commit_callbacks(execute=True):
        result = seller_pull(seller_id=connected_seller.id).orders
    assert result.settled_orders == ["MP-ONE"]
    assert [kind for kind, _ in events_after(order, last)] == [
        "fulfillment_stored",
        "pulled",
        "settled",
        "queued",
    ]
    assert quiet_broker.pushes == [(order.id, None)]
    order.refresh_from_db()
    assert (order.state, order.sync.status, order.sync.desired_version) == ("SHIPPED", "pending", 2)

    # Listed again (the cursor overlap), the same fulfillment costs nothing: no request,
    # no write, no event, no push.
    shipments = list(Shipment.objects.values_list("id", flat=True))
    last = last_event_id()
    with django_capture_on_commit_callbacks(execute=True):
        result = seller_pull(seller_id=connected_seller.id).orders
    assert (result.listed, result.fetched, result.changed, result.settled) == (1, 0, 0, 0)
    assert result.unchanged == 1
    assert events_after(order, last) == []
    assert quiet_broker.pushes == [(order.id, None)]
    assert list(Shipment.objects.values_list("id", flat=True)) == shipments
    order.sync.refresh_from_db()
    assert order.sync.desired_version == 2


def test_each_changed_order_costs_the_same_few_queries_in_one_transaction(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    """A shipped, valid order: its fulfillment read (and call log), then one transaction
    that stores, settles and queues the push. The cost must not grow with the pull."""
    seller_pull(seller_id=connected_seller.id)  # creates the pull state: equal fixed costs
    control = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")
    counts = {}
    for size in (1, 2, 4):
        for i in range(size):
            placed(f"MP-Q{size}-{i}")
            platform.sandbox.ship(f"MP-Q{size}-{i}")
        with CaptureQueriesContext(connection) as captured:
            result = seller_pull(seller_id=connected_seller.id).orders
        assert (result.pages, result.changed, result.settled) == (1, size, size)
        statements = [q["sql"].split(None, 1)[0].upper() for q in captured.captured_queries]
        counts[size] = (
            sum(s not in control for s in statements),
            statements.count("SAVEPOINT"),  # atomic blocks (the test runs in a transaction)
        )
    per_order = [counts[2][k] - counts[1][k] for k in (0, 1)]
    assert [counts[4][k] - counts[2][k] for k in (0, 1)] == [2 * n for n in per_order]
    queries, transactions = per_order
    # The pull's own (the listing carries the fulfillment: no read, no call log row).
    assert queries <= 9
    assert transactions == 1


def test_partial_then_split_shipments_settle_only_when_every_line_is_done(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    order = placed("MP-PART")
    platform.sandbox.ship("MP-PART", lines=[{"mp_line_number": "1", "quantity": 1}])
    seller_pull(seller_id=connected_seller.id)
    order.refresh_from_db()
    assert line_totals(order) == {"1": (1, 0), "2": (0, 0)}
    assert order.state == "AWAITING_SHIPMENT"
    platform.sandbox.ship("MP-PART", split=2)  # the rest: line 1 in two parcels, line 2
    seller_pull(seller_id=connected_seller.id)
    order.refresh_from_db()
    assert line_totals(order) == {"1": (3, 0), "2": (1, 0)}
    assert Shipment.objects.filter(line__order=order, line__mp_line_number="1").count() == 3
    assert order.state == "SHIPPED"


def test_seller_cancellations_count_towards_settlement(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    mixed = placed("MP-MIX")
    gone = placed("MP-GONE")
    platform.sandbox.ship("MP-MIX", lines=[{"mp_line_number": "1"}])
    platform.sandbox.cancel("MP-MIX", lines=[{"mp_line_number": "2"}], reason="out_of_stock")
    platform.sandbox.cancel("MP-GONE", reason="customer_cancelled")
    seller_pull(seller_id=connected_seller.id)
    mixed.refresh_from_db()
    gone.refresh_from_db()
    assert line_totals(mixed) == {"1": (3, 0), "2": (0, 1)}
    assert mixed.lines.get(mp_line_number="2").cancellations.get().reason == "out_of_stock"
    assert mixed.state == "SHIPPED"
    assert gone.state == "CANCELLED"  # nothing shipped
    order_push(order_id=gone.id)
    assert platform.order("MP-GONE")["marketplace_state"] == "CANCELLED"


def test_a_second_pull_with_nothing_new_makes_one_list_request_and_changes_nothing(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    placed("MP-IDLE")
    platform.sandbox.ship("MP-IDLE")
    seller_pull(seller_id=connected_seller.id)
    cursor = SellerSync.objects.get().cursor
    assert cursor is not None
    events = SyncEvent.objects.count()
    shipments = list(Shipment.objects.values_list("id", flat=True))
    calls = PlatformCall.objects.count()
    since = platform.requests()[0]["request_id"] if platform.requests() else None

    result = seller_pull(seller_id=connected_seller.id).orders

    new_calls = list(PlatformCall.objects.order_by("id")[calls:])
    # One listing of orders; then the after-sale pull's one listing of open refunds (the
    # seller shipped an order they may still refund).
    assert [(c.method, c.path.split("?")[0]) for c in new_calls] == [
        ("GET", "/orders"),
        ("GET", "/refunds"),
    ]
    assert "seller_updated_after" in new_calls[0].path
    assert (result.listed, result.unchanged, result.fetched) == (1, 1, 0)
    assert SyncEvent.objects.count() == events
    assert list(Shipment.objects.values_list("id", flat=True)) == shipments
    # The cursor is the start of the last complete pull (our clock), not a platform field.
    assert SellerSync.objects.get().cursor > cursor
    logged = [r for r in platform.requests() if r["request_id"] != since]
    assert logged  # the sandbox saw the listing too


def test_listing_follows_next_cursor_across_pages(
    platform: Platform, connected_seller: Any, quiet_broker: Any, settings: Any
) -> None:
    settings.PULL_PAGE_SIZE = 10
    for i in range(12):
        placed(f"MP-PG{i:02d}")
        platform.sandbox.ship(f"MP-PG{i:02d}")
    result = seller_pull(seller_id=connected_seller.id).orders
    assert (result.pages, result.listed, result.settled) == (2, 12, 12)
    assert Order.objects.filter(state="SHIPPED").count() == 12


BAD_KINDS = [
    ("unknown_carrier", "UNKNOWN_CARRIER", {"lines": [{"mp_line_number": "1"}]}),
    ("bad_tracking_number", "INVALID_TRACKING_NUMBER", {"lines": [{"mp_line_number": "1"}]}),
    ("excess_quantity", "EXCESS_QUANTITY", {"lines": [{"mp_line_number": "1", "quantity": 3}]}),
    ("unknown_line", "UNKNOWN_LINE", {}),
    ("future_shipped_date", "INVALID_SHIP_DATE", {"lines": [{"mp_line_number": "1"}]}),
]


@pytest.mark.parametrize(("bad", "code", "spec"), BAD_KINDS)
def test_bad_fulfillment_is_reported_once_and_blocks_settlement(
    platform: Platform, connected_seller: Any, quiet_broker: Any, bad: str, code: str,
    spec: dict,
) -> None:  # fmt: skip
    order = placed("MP-BAD")
    platform.sandbox.ship("MP-BAD", bad=bad, **spec)
    seller_pull(seller_id=connected_seller.id)
    problem = ValidationProblem.objects.get(order=order)
    assert problem.code == code
    assert problem.reported_at is not None
    errors = platform.order("MP-BAD")["errors"]
    assert [e["code"] for e in errors] == [code]
    if code != "UNKNOWN_LINE":
        assert errors[0]["mp_line_number"] == "1"

    # Pull again, even forcing the same fulfillment to be stored again: nothing new is posted.
    Order.objects.filter(pk=order.pk).update(fulfillment_digest="")
    seller_pull(seller_id=connected_seller.id)
    seller_pull(seller_id=connected_seller.id)
    assert len(platform.order("MP-BAD")["errors"]) == 1
    assert ValidationProblem.objects.filter(order=order).count() == 1
    order.refresh_from_db()
    assert order.state == "AWAITING_SHIPMENT"  # an open problem blocks settlement


def test_a_problem_that_disappears_is_resolved_and_the_order_settles(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    order = placed("MP-FIX")
    bad = {
        "status": "COMPLETE",
        "fulfillments": [
            {"mp_line_number": "1", "shipments": [
                {"quantity": 3, "carrier": "UPS", "tracking_number": "1Z-BAD",
                 "shipped_date": order.purchase_date.date().isoformat()}]},
            {"mp_line_number": "2", "cancellations": [{"quantity": 1, "reason": "other"}]},
        ],
    }  # fmt: skip
    order_fulfillment_apply(order_id=order.id, body=bad)
    problem = ValidationProblem.objects.get(order=order)
    assert problem.is_open
    good = {**bad}
    good["fulfillments"] = [
        {**bad["fulfillments"][0], "shipments": [
            {**bad["fulfillments"][0]["shipments"][0], "tracking_number": "1Z999AA10123456784"}]},
        bad["fulfillments"][1],
    ]  # fmt: skip
    assert order_fulfillment_apply(order_id=order.id, body=good)
    problem.refresh_from_db()
    assert problem.resolved_at is not None
    assert not order_fulfillment_apply(order_id=order.id, body=good)  # same body: no change


def test_a_corrected_fulfillment_resolves_the_problem_and_settles_in_the_same_step(
    seller: Any, quiet_broker: Any
) -> None:
    order = make_order("MP-CORRECTED")
    shipped = order.purchase_date.date().isoformat()

    def body(tracking: str) -> dict[str, Any]:
        return {
            "status": "COMPLETE",
            "fulfillments": [
                {"mp_line_number": "1", "shipments": [
                    {"quantity": 3, "carrier": "UPS", "tracking_number": tracking,
                     "shipped_date": shipped}]},
                {"mp_line_number": "2", "cancellations": [{"quantity": 1, "reason": "other"}]},
            ],
        }  # fmt: skip

    bad = order_fulfillment_pull(order_id=order.id, body=body("1Z-BAD"))
    assert (bad.changed, bad.settled, bad.report_due) == (True, None, True)
    problem = ValidationProblem.objects.get(order=order)
    assert problem.is_open
    problem.reported_at = problem.last_seen_at
    problem.save()

    last = last_event_id()
    good = order_fulfillment_pull(order_id=order.id, body=body("1Z999AA10123456784"))
    assert (good.changed, good.settled, good.report_due) == (True, "SHIPPED", False)
    assert [kind for kind, _ in events_after(order, last)] == [
        "fulfillment_stored",
        "problem_resolved",
        "pulled",
        "settled",
        "queued",
    ]
    problem.refresh_from_db()
    assert problem.resolved_at is not None
    order.refresh_from_db()
    assert order.state == "SHIPPED"
    assert line_totals(order) == {"1": (3, 0), "2": (0, 1)}

    last = last_event_id()
    again = order_fulfillment_pull(order_id=order.id, body=body("1Z999AA10123456784"))
    assert (again.changed, again.settled) == (False, None)
    assert events_after(order, last) == [("pulled", "fulfillment unchanged")]


def test_failed_error_report_is_retried_by_the_next_pull(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    order = placed("MP-REPORT")
    # Both tries of the first pull (per order, then the sweep at its end) fail.
    platform.sandbox.set_faults(endpoint="errors", kind="503", count=2)
    platform.sandbox.ship("MP-REPORT", bad="bad_tracking_number", lines=[{"mp_line_number": "1"}])
    seller_pull(seller_id=connected_seller.id)
    problem = ValidationProblem.objects.get(order=order)
    assert problem.reported_at is None
    assert problem.report_error
    seller_pull(seller_id=connected_seller.id)
    problem.refresh_from_db()
    assert problem.reported_at is not None
    assert len(platform.order("MP-REPORT")["errors"]) == 1


def test_a_running_pull_of_one_seller_is_not_duplicated(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    from marketplace.sync.pull_lease import lease_claim

    assert lease_claim(seller_id=connected_seller.id) is not None
    result = seller_pull(seller_id=connected_seller.id).orders
    assert result.ran is False


def test_one_sellers_running_pull_does_not_block_another_seller(
    platform: Platform, connected_seller: Any, other_seller: Any, quiet_broker: Any
) -> None:
    from marketplace.sync.pull_lease import lease_claim

    bob = other_seller
    platform.reconnect(bob, who=PLATFORM_SELLER_B)
    placed("MP-BOB", seller="bob")
    platform.sandbox.ship("MP-BOB")
    assert lease_claim(seller_id=connected_seller.id) is not None  # alice's pull "running"
    result = seller_pull(seller_id=bob.id).orders
    assert result.ran
    assert result.settled == 1


def test_a_package_deleted_or_corrected_at_the_platform_is_gone_here_too(
    seller: Any, quiet_broker: Any
) -> None:
    """The pulled fulfillment is the platform's current truth: a shipment no longer listed
    is removed, a corrected one replaces the stored one, the problem it caused resolves,
    and nothing is reported or settled twice."""
    from marketplace.orders.services.fulfillment import fulfillment_digest

    order = make_order("MP-GONE")
    shipped = order.purchase_date.date().isoformat()
    good = {"quantity": 3, "carrier": "UPS", "tracking_number": "1Z999AA10123456784",
            "shipped_date": shipped}  # fmt: skip
    bad = {**good, "quantity": 1, "tracking_number": "1Z12-BAD"}

    def body(line_2: list[dict[str, Any]]) -> dict[str, Any]:
        return {"status": "COMPLETE" if line_2 else "PARTIALLY_FULFILLED", "fulfillments": [
            {"mp_line_number": "1", "shipments": [good]},
            {"mp_line_number": "2", "shipments": line_2},
        ]}  # fmt: skip

    with_bad, deleted = body([bad]), body([])
    corrected = body([{**bad, "tracking_number": "1ZFIXED0000000001A"}])
    digests = {fulfillment_digest(b) for b in (with_bad, deleted, corrected)}
    assert len(digests) == 3  # a deletion and a correction each look changed

    first = order_fulfillment_pull(order_id=order.id, body=with_bad)
    assert (first.changed, first.settled, first.report_due) == (True, None, True)
    problem = ValidationProblem.objects.get(order=order)
    problem.reported_at = problem.last_seen_at  # as order_problems_report leaves it
    problem.save()

    last = last_event_id()
    gone = order_fulfillment_pull(order_id=order.id, body=deleted)
    assert (gone.changed, gone.settled, gone.report_due) == (True, None, False)
    assert line_totals(order) == {"1": (3, 0), "2": (0, 0)}
    stored = SyncEvent.objects.get(order=order, id__gt=last, kind="fulfillment_stored")
    assert "no longer on the platform" in stored.message
    assert "line 2 UPS 1Z12-BAD" in stored.message
    assert stored.detail == {"shipments_gone": [
        {"mp_line_number": "2", "carrier": "UPS", "tracking_number": "1Z12-BAD"}]}  # fmt: skip
    problem.refresh_from_db()
    assert problem.resolved_at is not None
    order.refresh_from_db()
    assert order.state == "AWAITING_SHIPMENT"  # line 2 is open again

    fixed = order_fulfillment_pull(order_id=order.id, body=corrected)
    assert (fixed.changed, fixed.settled, fixed.report_due) == (True, "SHIPPED", False)
    assert set(
        Shipment.objects.filter(line__order=order).values_list("tracking_number", flat=True)
    ) == {"1Z999AA10123456784", "1ZFIXED0000000001A"}
    assert line_totals(order) == {"1": (3, 0), "2": (1, 0)}
    problem.refresh_from_db()
    assert problem.resolved_at is not None
    assert ValidationProblem.objects.filter(order=order).count() == 1
    assert SyncEvent.objects.filter(order=order, kind="settled").count() == 1
