"""Every page costs a fixed number of queries, whatever the data size.

The same bound is asserted at a small size (3 sellers / 10 orders) and a larger one
(30 sellers / 300 orders, each with lines, shipments, cancellations, problems, history
and platform calls): a per-row query would blow the bound at the larger size.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.marketplace.dashboard.builders import World, build_world

pytestmark = pytest.mark.django_db

SIZES = {"small": (3, 10), "large": (30, 300)}

# Page → URL (built from the world) and its query bound. The bound includes the session
# and user lookups (2), the paginator's COUNT where there is one, and the navigation's
# counts of what needs staff (+1 on every full page: one statement of index probes).
STAFF_PAGES: dict[str, tuple[Any, int]] = {
    # (12: the attention lists include sellers whose pulls keep failing; 14: the cards
    # people act on, connections and not-synced orders, are read live besides.)
    # +1: the API access banner; +2: the reconciliation panel (open and last day by kind)
    "overview": (lambda w: "/dashboard/", 18),
    "overview-live": (lambda w: "/dashboard/live/", 14),
    "sellers": (lambda w: "/dashboard/sellers/", 5),
    "sellers-filtered": (
        lambda w: "/dashboard/sellers/?q=shop&state=connected&has_failures=on&sort=-failures",
        5,
    ),
    "sellers-by-last-pull": (lambda w: "/dashboard/sellers/?sort=-last_pull&page=2", 5),
    # +1: catalog; +2: reconciliation (the last pass, open findings)
    "seller": (lambda w: f"/dashboard/sellers/{w.seller_with_orders().id}/", 15),
    "seller-live": (lambda w: f"/dashboard/sellers/{w.seller_with_orders().id}/live/", 5),
    # +1: the page's lines (each order's total)
    "orders": (lambda w: "/dashboard/orders/", 6),
    "orders-failed": (lambda w: "/dashboard/orders/?status=failed&q=0", 6),
    "orders-filtered-sorted": (
        lambda w: (
            "/dashboard/orders/?late=on&problems=on&seller_name=shop&state=PENDING"
            "&placed_from=2020-01-01&placed_to=2099-12-31&sort=-ship_by&page=2"
        ),
        6,
    ),
    # +1: listings; +3: returns, seller refunds, ledger (their lines and steps prefetched
    # only when there are some)
    "order": (lambda w: f"/dashboard/orders/{w.order_with_everything().id}/", 15),
    "order-live": (lambda w: f"/dashboard/orders/{w.order_with_everything().id}/live/", 4),
}
PORTAL_PAGES: dict[str, tuple[Any, int]] = {
    "portal-orders": (lambda w: "/sellers/orders/", 8),
    # +3: the order's returns, refunds and refund ledger (each with its lines), read once.
    "portal-order": (lambda w: f"/sellers/orders/{w.order_with_everything().id}/", 12),
    # +1: the open problems' count (the badge never says "Up to date" while one is open).
    "portal-order-live": (lambda w: f"/sellers/orders/{w.order_with_everything().id}/live/", 5),
}


@pytest.fixture(params=list(SIZES))
def world(request: pytest.FixtureRequest, staff_user: Any) -> World:
    sellers, orders = SIZES[request.param]
    return build_world(sellers=sellers, orders=orders, staff_actor=staff_user)


@pytest.mark.parametrize("page", list(STAFF_PAGES))
def test_staff_page_queries_do_not_grow_with_data(
    page: str, world: World, staff_client: Client, django_assert_max_num_queries: Any
) -> None:
    url, bound = STAFF_PAGES[page]
    with django_assert_max_num_queries(bound):
        response = staff_client.get(url(world))
    assert response.status_code == 200


@pytest.mark.parametrize("page", list(PORTAL_PAGES))
def test_portal_page_queries_do_not_grow_with_data(
    page: str, world: World, django_assert_max_num_queries: Any
) -> None:
    client = Client()
    client.force_login(world.seller_with_orders().user)
    url, bound = PORTAL_PAGES[page]
    with django_assert_max_num_queries(bound):
        response = client.get(url(world))
    assert response.status_code == 200
