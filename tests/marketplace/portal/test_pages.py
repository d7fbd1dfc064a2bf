"""The seller's order pages: own orders only, sync status, shipments, problems in plain words."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from marketplace.orders.models import Order, Shipment, ValidationProblem
from sellers.models import Seller
from tests.marketplace.dashboard.builders import World, build_world
from tests.support.app_fixtures import page_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db: Any) -> World:
    return build_world(sellers=2, orders=6)


@pytest.fixture
def owner(world: World) -> Client:
    client = Client()
    client.force_login(world.sellers[0].user)  # sign-in itself: tests/sellers
    return client


def own_orders(world: World) -> list[Order]:
    return [o for o in world.orders if o.seller_id == world.sellers[0].id]


def test_seller_sees_only_their_orders(world: World, owner: Client) -> None:
    body = page_text(owner.get("/sellers/orders/"))
    for order in world.orders:
        shown = order.mp_order_number in body
        assert shown == (order.seller_id == world.sellers[0].id), order.mp_order_number


def test_another_sellers_order_is_404(world: World, owner: Client) -> None:
    theirs = next(o for o in world.orders if o.seller_id != world.sellers[0].id)
    for url in (
        f"/sellers/orders/{theirs.id}/",
        f"/sellers/orders/{theirs.id}/live/",
        "/sellers/orders/999999/",
    ):
        body = page_text(owner.get(url), status=404)
        assert "Not Found" in body, url
        assert theirs.mp_order_number not in body, url


def test_seller_cannot_open_the_dashboard(world: World, owner: Client) -> None:
    for url in ("/dashboard/", f"/dashboard/orders/{world.orders[0].id}/"):
        assert "This page is for marketplace staff" in page_text(owner.get(url), status=403)


def test_staff_and_anonymous_do_not_get_the_portal(staff_client: Client, client: Client) -> None:
    assert "signed in as staff" in page_text(staff_client.get("/sellers/orders/"), status=403)
    response = client.get("/sellers/orders/")
    assert response.status_code == 302
    assert response["Location"].startswith("/sellers/login/")


def test_order_list_shows_sync_status_tracking_links_and_problem_count(
    world: World, owner: Client
) -> None:
    body = page_text(owner.get("/sellers/orders/"))
    assert (
        '<a href="https://www.ups.com/track?tracknum=1Z999AA10123456784" target="_blank" '
        'rel="noopener" class="tracking">1Z999AA10123456784</a>' in body
    )
    # The seller's orders are pending, retrying and waiting: in the seller's words
    assert "Sending…" in body
    assert "Waiting for your connection" in body
    assert "1 to fix" in body
    assert 'id="connection-summary"' in body  # the connection card of the portal
    assert 'href="/sellers/connection/"' in body


def test_order_detail_explains_problems_in_plain_words(world: World, owner: Client) -> None:
    order = own_orders(world)[0]
    body = page_text(owner.get(f"/sellers/orders/{order.id}/"))
    assert "Tracking number not valid" in body
    assert "What to do:" in body
    assert "carrier&#x27;s label" in body
    assert "out_of_stock" in body
    assert 'data-live="/sellers/orders/' in body


def test_resolved_problems_are_not_shown_as_to_fix(world: World, owner: Client) -> None:
    order = own_orders(world)[0]
    ValidationProblem.objects.filter(order=order).update(resolved_at=order.created_at)
    body = page_text(owner.get(f"/sellers/orders/{order.id}/"))
    assert "Nothing to fix" in body


def test_unknown_problem_code_gets_a_generic_explanation(world: World, owner: Client) -> None:
    order = own_orders(world)[0]
    ValidationProblem.objects.filter(order=order).update(code="SOMETHING_NEW")
    body = page_text(owner.get(f"/sellers/orders/{order.id}/"))
    assert "Problem with this fulfillment" in body


def test_a_non_web_tracking_url_is_never_a_link(world: World, owner: Client) -> None:
    order = own_orders(world)[0]
    Shipment.objects.filter(line__order=order).update(tracking_url="javascript:alert(1)")
    body = page_text(owner.get(f"/sellers/orders/{order.id}/"))
    assert "javascript:" not in body
    assert "<code>1Z999AA10123456784</code>" in body


def test_empty_state_and_search(seller: Seller, seller_client: Client, world: World) -> None:
    assert "No orders yet." in page_text(seller_client.get("/sellers/orders/"))
    assert "No order matches these filters" in page_text(seller_client.get("/sellers/orders/?q=x"))


def test_seller_navigation_links_portal_orders_and_connection(owner: Client) -> None:
    body = page_text(owner.get("/sellers/orders/"))
    for href in ('href="/sellers/"', 'href="/sellers/orders/"', 'href="/sellers/connection/"'):
        assert href in body
