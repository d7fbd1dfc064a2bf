"""What the dashboard pages show: numbers, filters, sorting, pagination, empty states."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from marketplace.dashboard.selectors import calls_per_hour
from marketplace.orders.models import OrderSync
from marketplace.platform.models import PlatformCall
from sellers.models import PlatformConnection
from tests.marketplace.dashboard.builders import World, build_world
from tests.support.app_fixtures import page_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(staff_user: Any) -> World:
    return build_world(sellers=3, orders=10, staff_actor=staff_user)


def test_every_page_has_an_empty_state(staff_client: Client) -> None:
    overview = page_text(staff_client.get("/dashboard/"))
    assert "No platform calls in the last 24 hours." in overview
    assert "Every connected seller's connection works." in overview
    assert "No failed pushes." in overview
    assert "No sellers yet." in page_text(staff_client.get("/dashboard/sellers/"))
    assert "No orders yet." in page_text(staff_client.get("/dashboard/orders/"))
    assert "No seller matches" in page_text(staff_client.get("/dashboard/sellers/?q=zzz"))
    assert "No order matches" in page_text(staff_client.get("/dashboard/orders/?q=zzz"))


def test_overview_counts_connections_syncs_expiry_and_lag(
    world: World, staff_client: Client
) -> None:
    response = staff_client.get("/dashboard/")
    overview = response.context["overview"]
    states = {t.value: t.count for t in overview.connections}
    # 3 sellers: connected, needs_reauth, disconnected (every fifth has no row).
    assert states == {"connected": 1, "needs_reauth": 1, "disconnected": 1, "not_connected": 0}
    statuses = {t.value: t.count for t in overview.sync_counts}
    assert sum(statuses.values()) == 10
    assert statuses["failed"] == 2
    assert overview.access_expiring == 1  # the connected one expires in 30 min
    assert overview.refresh_expiring == 1  # ... and its refresh token in 10 days
    assert overview.calls_24h == 30
    assert overview.failed_calls_24h == 10
    assert overview.push_lag is not None
    assert overview.pull_lag is not None
    assert [s.display_name for s in overview.needs_reauth] == ["Shop W 001"]
    body = response.content.decode()
    assert '<svg class="chart"' in body
    assert 'data-live="/dashboard/live/"' in body
    assert "/static/js/live.js" in body


def test_chart_is_one_grouped_query_with_24_hours(
    world: World, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(1):
        buckets = calls_per_hour(now=timezone.now())
    assert len(buckets) == 24
    assert sum(b.pushes for b in buckets) == 20
    assert sum(b.pulls for b in buckets) == 10
    assert sum(b.failures for b in buckets) == 10


def test_sellers_search_filter_and_sort(world: World, staff_client: Client) -> None:
    def names(query: str) -> list[str]:
        page = staff_client.get("/dashboard/sellers/" + query).context["page"]
        return [s.display_name for s in page.object_list]

    assert names("?q=W-seller-2") == ["Shop W 002"]  # by username
    assert names("?q=shop w 001") == ["Shop W 001"]  # by name
    assert names("?state=needs_reauth") == ["Shop W 001"]
    assert names("?has_failures=on") == ["Shop W 000", "Shop W 002"]
    assert names("?sort=-name") == ["Shop W 002", "Shop W 001", "Shop W 000"]
    failures = staff_client.get("/dashboard/sellers/?sort=-failures").context["page"]
    counts = [s.failures for s in failures.object_list]
    assert counts == sorted(counts, reverse=True)
    assert names("?sort=bogus&state=bogus") == ["Shop W 000", "Shop W 001", "Shop W 002"]


def test_seller_without_connection_row_counts_as_not_connected(
    world: World, staff_client: Client
) -> None:
    PlatformConnection.objects.filter(seller=world.sellers[2]).delete()
    page = staff_client.get("/dashboard/sellers/?state=not_connected").context["page"]
    assert [s.display_name for s in page.object_list] == ["Shop W 002"]


def test_sellers_and_orders_are_paginated_by_25(staff_user: Any, staff_client: Client) -> None:
    build_world(sellers=30, orders=60, prefix="p")
    sellers = staff_client.get("/dashboard/sellers/?page=2").context["page"]
    assert (sellers.number, len(sellers.object_list), sellers.paginator.num_pages) == (2, 5, 2)
    orders = staff_client.get("/dashboard/orders/?page=3")
    assert len(orders.context["page"].object_list) == 10
    assert "Page 3 of 3" in orders.content.decode()


def test_orders_filter_by_sync_status_and_number(world: World, staff_client: Client) -> None:
    failed = staff_client.get("/dashboard/orders/?status=failed").context["page"]
    assert {o.sync.status for o in failed.object_list} == {"failed"}
    found = staff_client.get("/dashboard/orders/?q=w-00007").context["page"]
    assert [o.mp_order_number for o in found.object_list] == ["W-00007"]


def test_seller_detail_shows_timeline_orders_calls_and_reported_errors(
    world: World, staff_client: Client
) -> None:
    seller = world.sellers[0]
    body = page_text(staff_client.get(f"/dashboard/sellers/{seller.id}/"))
    assert "Connection timeline" in body
    assert "Token refreshed" in body
    assert "W-00000" in body
    assert "W-00003" in body
    assert 'id="seller-calls"' in body
    assert "PUT /orders/W-00000" in body
    assert 'id="reported-problems"' in body
    assert "INVALID_TRACKING_NUMBER" in body
    # Only what cannot be undone asks first: Disconnect does, Refresh and Pull now do not.
    assert 'data-confirm="Disconnect this seller? This cannot be undone' in body
    assert 'id="refresh-button"' in body
    assert 'id="pull-button"' in body
    assert body.count("data-confirm=") == 1
    assert 'data-live="/dashboard/sellers/' in body


def test_order_detail_shows_payload_answers_fulfillment_problems_history(
    world: World, staff_client: Client
) -> None:
    order = world.orders[0]
    OrderSync.objects.filter(order=order).update(
        last_payload={"mp_order_number": order.mp_order_number, "currency": "EUR"}
    )
    body = page_text(staff_client.get(f"/dashboard/orders/{order.id}/"))
    assert "&quot;currency&quot;: &quot;EUR&quot;" in body  # pretty JSON, escaped
    assert "&quot;status&quot;: &quot;ORDERED&quot;" in body  # the platform's answer
    assert 'href="https://www.ups.com/track?tracknum=1Z999AA10123456784"' in body
    assert 'target="_blank" rel="noopener"' in body
    assert "out_of_stock" in body  # the cancellation on line 2
    assert "INVALID_TRACKING_NUMBER" in body
    assert "Push failed" in body
    assert "Queued" in body
    assert body.count(f"/orders/{order.mp_order_number}</code>") == 3  # its platform calls


def test_live_fragments_are_small_and_uncached(world: World, staff_client: Client) -> None:
    order = world.orders[0]
    for url in (
        "/dashboard/live/",
        f"/dashboard/orders/{order.id}/live/?part=sync",
        f"/dashboard/orders/{order.id}/live/?part=history",
        f"/dashboard/sellers/{world.sellers[0].id}/live/",
    ):
        response = staff_client.get(url)
        assert response.status_code == 200
        assert b"<html" not in response.content
        assert "no-cache" in response["Cache-Control"]


def test_old_calls_stay_out_of_the_last_24_hours(world: World, staff_client: Client) -> None:
    PlatformCall.objects.update(created_at=timezone.now() - timedelta(days=2))
    overview = staff_client.get("/dashboard/").context["overview"]
    assert overview.calls_24h == 0
    assert sum(b.pushes + b.pulls for b in overview.chart) == 0
