"""An incremental pull costs what changed, whatever the seller's history holds."""

from __future__ import annotations

from typing import Any

import pytest

from bench.harness import orders_insert
from marketplace.orders.models import Order, SyncEvent
from marketplace.orders.services.push import order_push
from marketplace.sync.pull import seller_pull
from tests.marketplace.conftest import make_order
from tests.support.app_fixtures import CLIENT_ID, PLATFORM_SELLER, Platform

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

HISTORY = 10_000


def requests_by_endpoint(platform: Platform) -> dict[str, int]:
    counts = platform.sandbox.state()["requests"]["by_endpoint"]
    return {endpoint: sum(statuses.values()) for endpoint, statuses in counts.items()}


NEW = 10


def test_ten_new_shipments_cost_one_listing_with_ten_thousand_settled_orders_in_history(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given a pull that completed before anything below happened (it found nothing),
    assert seller_pull(seller_id=connected_seller.id).orders.completed
    # and 10 000 orders shipped and settled a month ago, at the platform and here, with
    # the same numbers on both sides ("HIST-0000000" ...),
    made = platform.sandbox.control(
        "POST",
        "/orders/history",
        {"client_id": CLIENT_ID, "seller": PLATFORM_SELLER, "count": HISTORY,
         "prefix": "HIST-0", "days_ago": 30},
    )  # fmt: skip
    assert made["created"] == HISTORY
    history_ids = orders_insert(
        seller_ids=[connected_seller.id],
        count=HISTORY,
        prefix="HIST",
        state="SHIPPED",
        sync_status="synced",
    )
    # and 10 orders placed and shipped since,
    for i in range(NEW):
        order = make_order(f"MP-NEW{i}")
        assert order_push(order_id=order.id) == "synced"
        platform.sandbox.ship(f"MP-NEW{i}")
    before = requests_by_endpoint(platform)
    events = SyncEvent.objects.order_by("-id").values_list("id", flat=True).first()

    # when the seller is pulled,
    result = seller_pull(seller_id=connected_seller.id).orders

    # then one listing page (at most one per 50 changed orders) brought all ten, with no
    # request per order (the listing carries their fulfillments),
    after = requests_by_endpoint(platform)
    made_now = {key: after[key] - before.get(key, 0) for key in after}
    assert made_now.get("list_orders") == 1
    assert sum(made_now.values()) <= 1 + NEW
    assert (result.error, result.listed, result.settled) == ("", NEW, NEW)
    assert (
        Order.objects.filter(mp_order_number__startswith="MP-NEW", state="SHIPPED").count() == NEW
    )
    # and nothing was written for the 10 000 that did not change.
    assert not SyncEvent.objects.filter(id__gt=events, order_id__in=history_ids).exists()
