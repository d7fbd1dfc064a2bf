"""The pull against a platform that fails: retries on its own, resumes, remembers orders."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.orders.models import Order, SyncEvent
from marketplace.orders.services.push import order_push
from marketplace.sync.models import SellerSync
from marketplace.sync.pull import seller_pull
from tests.marketplace.conftest import make_order
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.django_db


@pytest.fixture
def fast_retries(settings: Any) -> Any:
    settings.PULL_ATTEMPTS = 2
    settings.PULL_RETRY_BASE = 0.01
    return settings


def shipped(platform: Platform, count: int, prefix: str = "MP-R") -> list[str]:
    numbers = []
    for i in range(count):
        number = f"{prefix}{i:03d}"
        order = make_order(number)
        assert order_push(order_id=order.id) == "synced"
        platform.sandbox.ship(number)
        numbers.append(number)
    return numbers


def listing_queries(platform: Platform) -> list[str]:
    return [r["query"] for r in platform.requests(endpoint="list_orders")]


def test_a_failed_page_is_retried_within_the_pull(
    platform: Platform, connected_seller: Any, quiet_broker: Any, fast_retries: Any
) -> None:
    shipped(platform, 3)
    platform.sandbox.set_faults(endpoint="list_orders", kind="500", count=1)
    result = seller_pull(seller_id=connected_seller.id).orders
    assert (result.error, result.retried, result.completed, result.settled) == ("", 1, True, 3)
    assert SellerSync.objects.get().consecutive_failures == 0


def test_a_page_that_keeps_failing_stops_the_pull_and_the_next_pull_resumes_there(
    platform: Platform, connected_seller: Any, quiet_broker: Any, fast_retries: Any
) -> None:
    fast_retries.PULL_PAGE_SIZE = 10
    shipped(platform, 25)
    # The first page goes through; both attempts at the second fail.
    platform.sandbox.set_faults(endpoint="list_orders", kind="502", skip=1, count=2)
    first = seller_pull(seller_id=connected_seller.id).orders
    assert (first.pages, first.settled, first.completed) == (1, 10, False)
    assert "listing page failed" in first.error
    state = SellerSync.objects.get()
    assert state.resume_cursor
    assert state.cursor is None
    assert state.consecutive_failures == 1
    settled_once = set(Order.objects.filter(state="SHIPPED").values_list("id", flat=True))
    last_event = SyncEvent.objects.order_by("-id").values_list("id", flat=True).first()
    asked_before = len(listing_queries(platform))

    second = seller_pull(seller_id=connected_seller.id).orders

    assert (second.resumed, second.completed, second.error) == (True, True, "")
    assert (second.pages, second.listed, second.settled) == (2, 15, 15)
    # It went on from the saved page, not from the oldest change: the orders of the
    # first page were neither listed nor touched again.
    assert "cursor=" in listing_queries(platform)[asked_before]
    assert Order.objects.filter(state="SHIPPED").count() == 25
    assert not SyncEvent.objects.filter(id__gt=last_event, order_id__in=settled_once).exists()
    state.refresh_from_db()
    assert (state.resume_cursor, state.consecutive_failures) == ("", 0)
    assert state.cursor is not None


def test_a_saved_cursor_the_platform_no_longer_takes_restarts_that_listing(
    platform: Platform, connected_seller: Any, quiet_broker: Any, fast_retries: Any
) -> None:
    shipped(platform, 2)
    SellerSync.objects.create(
        seller=connected_seller,
        resume_cursor="not-a-cursor-it-gave",
        resume_since=timezone.now() - timedelta(hours=1),
        resume_started_at=timezone.now(),
    )
    result = seller_pull(seller_id=connected_seller.id).orders
    assert (result.error, result.completed, result.settled) == ("", True, 2)


def test_pulls_that_keep_failing_are_counted_for_the_dashboard(
    platform: Platform, connected_seller: Any, quiet_broker: Any, fast_retries: Any
) -> None:
    platform.sandbox.set_faults(endpoint="list_orders", kind="503")
    for expected in (1, 2, 3):
        assert seller_pull(seller_id=connected_seller.id).orders.error
        assert SellerSync.objects.get().consecutive_failures == expected
    platform.sandbox.clear_faults()
    assert seller_pull(seller_id=connected_seller.id).orders.error == ""
    assert SellerSync.objects.get().consecutive_failures == 0


def test_an_order_that_could_not_be_read_is_fetched_on_its_own_next_time(
    platform: Platform, connected_seller: Any, quiet_broker: Any, fast_retries: Any
) -> None:
    (number,) = shipped(platform, 1, prefix="MP-LATE")
    # An earlier pull listed it but could not read it (say, a listing without fulfillments
    # and a failing /fulfillments): it is remembered, and the listing window moved on.
    state = SellerSync.objects.create(
        seller=connected_seller,
        retry_numbers=[number],
        cursor=timezone.now() + timedelta(hours=1),  # the listing no longer shows it
    )
    platform.sandbox.set_faults(endpoint="fulfillments", kind="500", count=2)
    failed_again = seller_pull(seller_id=connected_seller.id).orders
    # The listing still ran and completed; the order stays remembered, not lost.
    assert (failed_again.completed, failed_again.listed) == (True, 0)
    assert failed_again.failed_orders == [number]
    assert Order.objects.get(mp_order_number=number).state == "AWAITING_SHIPMENT"
    state.refresh_from_db()
    assert state.retry_numbers == [number]

    result = seller_pull(seller_id=connected_seller.id).orders
    assert result.fetched == 1
    state.refresh_from_db()
    assert state.retry_numbers == []
    assert Order.objects.get(mp_order_number=number).state == "SHIPPED"
