"""How orders are worded on the seller's and staff's order pages: an unpaid order says it
awaits payment (not that it is stuck), a partly shipped one says so, a package covering
several lines shows its tracking number once, the platform's status is in words."""

from __future__ import annotations

import pytest
from django.test import Client

from marketplace.orders.models import Order, OrderLine, Shipment
from sellers.models import Seller
from tests.support.app_fixtures import page_text
from tests.support.factories import OrderFactory

pytestmark = pytest.mark.django_db


def ship_in_one_package(order: Order, tracking: str = "1Z999AA10123456784") -> None:
    for line in OrderLine.objects.filter(order=order):
        Shipment.objects.create(
            line=line, quantity=1, carrier="UPS", tracking_number=tracking,
            tracking_url=f"https://www.ups.com/track?tracknum={tracking}",
        )  # fmt: skip


def test_an_unpaid_order_says_it_awaits_payment_on_every_order_page(
    seller: Seller, seller_client: Client, staff_client: Client
) -> None:
    order = OrderFactory(seller=seller, state=Order.State.PENDING, sync=True)
    for text in (
        page_text(seller_client.get("/sellers/orders/")),
        page_text(seller_client.get(f"/sellers/orders/{order.id}/")),
    ):
        assert "Awaiting payment" in text
        assert "ship it once it is paid" in text
    for text in (
        page_text(staff_client.get("/dashboard/orders/")),
        page_text(staff_client.get(f"/dashboard/orders/{order.id}/")),
    ):
        assert "Awaiting payment" in text
        assert "the seller ships it once it is paid" in text


def test_a_partly_shipped_order_says_so_and_a_package_shows_once(
    seller: Seller, seller_client: Client, staff_client: Client
) -> None:
    order = OrderFactory(
        seller=seller, lines=3, sync=True, fulfillment_status="PARTIALLY_FULFILLED"
    )
    ship_in_one_package(order)
    portal = page_text(seller_client.get("/sellers/orders/"))
    assert "Partly shipped" in portal
    assert "Awaiting shipment" not in portal
    assert portal.count("1Z999AA10123456784</a>") == 1
    assert "Partly shipped" in page_text(staff_client.get("/dashboard/orders/"))


def test_the_platforms_status_is_in_words_not_repeated_as_a_code(
    seller: Seller, staff_client: Client
) -> None:
    order = OrderFactory(seller=seller, sync=True, fulfillment_status="COMPLETE")
    text = page_text(staff_client.get(f"/dashboard/orders/{order.id}/"))
    assert "on the platform: every line shipped or cancelled" in text
    assert "complete <code>COMPLETE</code>" not in text


def test_the_order_searches_suggest_a_number_that_exists(
    seller_client: Client, staff_client: Client
) -> None:
    for text in (
        page_text(seller_client.get("/sellers/orders/")),
        page_text(staff_client.get("/dashboard/orders/")),
    ):
        assert "MP-1001" not in text
