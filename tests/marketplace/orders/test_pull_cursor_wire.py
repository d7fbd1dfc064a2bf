"""The pull's cursor under the platform's reading of ``seller_updated_after`` ("on or
after", whole UTC seconds with ``Z``), and pages that end on a ``""`` cursor: no order
missed, the boundary order re-read harmlessly, no endless loop on one page."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from marketplace.orders.models import Order, SyncEvent
from marketplace.orders.services.push import order_push
from marketplace.platform.models import PlatformCall
from marketplace.platform.order_source import OrderSourceClient
from marketplace.sync.models import SellerSync
from marketplace.sync.pull import seller_pull
from tests.marketplace.conftest import make_order
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.django_db

WIRE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def placed(number: str) -> Order:
    order = make_order(number)
    assert order_push(order_id=order.id) == "synced"
    return order


def listing_filters(since_call: int) -> list[str]:
    calls = PlatformCall.objects.filter(id__gt=since_call, path__startswith="/orders?")
    return [parse_qs(urlsplit(c.path).query)["seller_updated_after"][0] for c in calls]


def last_call_id() -> int:
    return PlatformCall.objects.order_by("-id").values_list("id", flat=True).first() or 0


@pytest.mark.parametrize("last_page", ["A", "B"])
def test_every_page_is_read_once_whether_the_last_cursor_is_null_or_empty(
    platform: Platform, connected_seller: Any, quiet_broker: Any, settings: Any, last_page: str
) -> None:
    platform.sandbox.readings(next_cursor_last=last_page)
    settings.PULL_PAGE_SIZE = 10
    for i in range(20):  # exactly two pages: the second one's cursor ends the listing
        placed(f"MP-EC{i:02d}")
        platform.sandbox.ship(f"MP-EC{i:02d}")
    before = last_call_id()

    result = seller_pull(seller_id=connected_seller.id).orders

    assert (result.pages, result.listed, result.settled, result.error) == (2, 20, 20, "")
    assert result.completed
    assert len(listing_filters(before)) == 2
    assert SellerSync.objects.get().resume_cursor == ""


def test_an_order_changed_in_the_cursors_second_is_not_missed_and_re_reading_is_harmless(
    platform: Platform, connected_seller: Any, quiet_broker: Any, settings: Any
) -> None:
    settings.PULL_CURSOR_OVERLAP = settings.PULL_CURSOR_OVERLAP * 0  # the boundary alone
    placed("MP-BD1")
    placed("MP-BD2")
    seller_pull(seller_id=connected_seller.id)
    # Right after the pull: in the cursor's second, or later.
    platform.sandbox.ship("MP-BD1")
    before = last_call_id()

    second = seller_pull(seller_id=connected_seller.id).orders

    assert (second.changed, second.settled, second.error) == (1, 1, "")
    assert Order.objects.get(mp_order_number="MP-BD1").state == "SHIPPED"
    (sent,) = listing_filters(before)
    assert WIRE.fullmatch(sent)
    events = SyncEvent.objects.count()

    third = seller_pull(seller_id=connected_seller.id).orders

    # The boundary order may be listed again ("on or after"): it changes nothing.
    assert (third.changed, third.settled, third.error) == (0, 0, "")
    assert SyncEvent.objects.count() == events
    assert platform.sandbox.violations()["by_kind"]["date_format"] == 0


def test_a_cursor_answered_back_unchanged_stops_the_pull_instead_of_looping(
    platform: Platform, connected_seller: Any, quiet_broker: Any, monkeypatch: Any
) -> None:
    # The sandbox never does this; a platform bug would. One page, then the same cursor.
    pages = iter([{"orders": [], "next_cursor": "c1"}] + [{"orders": [], "next_cursor": "c1"}] * 5)
    monkeypatch.setattr(OrderSourceClient, "list_orders", lambda self, **_: next(pages))

    result = seller_pull(seller_id=connected_seller.id).orders

    assert result.pages == 2
    assert "answered the cursor it was given" in result.error
    assert not result.completed
    assert SellerSync.objects.get().resume_cursor == ""
