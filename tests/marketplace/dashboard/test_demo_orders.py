"""``manage.py demo_orders``: prints the numbers it made, orders the seller's listed SKUs
(or, before any feed ran, the demo catalog's), and can wait for the platform."""

from __future__ import annotations

import re
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from marketplace.dashboard.management.commands.demo_orders import DEMO_CATALOG_PRODUCTS
from marketplace.orders.models import Order, OrderLine
from sellers.models import Seller
from tests.support.factories import ListingFactory, SellerFactory

pytestmark = pytest.mark.django_db
NUMBER = re.compile(r"^DEMO-\d{14}-\d{5}", re.M)


def run(*args: str) -> str:
    out = StringIO()
    call_command("demo_orders", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_it_prints_the_number_and_state_of_every_order_it_made(
    seller: Seller, quiet_broker: Any
) -> None:
    out = run("--seller", seller.user.username, "--count", "30", "--seed", "3")
    printed = NUMBER.findall(out)
    assert sorted(printed) == sorted(Order.objects.values_list("mp_order_number", flat=True))
    assert len(printed) == 30
    for order in Order.objects.all():
        line = next(x for x in out.splitlines() if x.startswith(order.mp_order_number))
        assert order.state in line
        if order.state == "PENDING":  # unpaid on purpose, and said so
            assert "awaiting payment" in line
    assert "30 order(s) created" in out


def test_quiet_prints_only_the_numbers_and_paid_leaves_none_pending(
    seller: Seller, quiet_broker: Any
) -> None:
    out = run("--seller", seller.user.username, "--count", "40", "--paid", "--quiet")
    assert out.split() == list(
        Order.objects.order_by("mp_order_number").values_list("mp_order_number", flat=True)
    )
    assert not Order.objects.filter(state="PENDING").exists()


def test_orders_use_the_sellers_active_listings_when_there_are_some(
    seller: Seller, quiet_broker: Any
) -> None:
    listed = {ListingFactory(seller=seller).sku for _ in range(4)}
    ListingFactory(seller=seller, sku="GONE-1", active=False)
    ListingFactory(seller=SellerFactory(username="bob"), sku="BOBS-1")
    out = run("--seller", seller.user.username, "--count", "15", "--seed", "1")
    used = set(OrderLine.objects.values_list("sku", flat=True))
    assert used
    assert used <= listed
    assert "SKUs of 4 of the seller's active listings" in out


def test_before_any_feed_orders_use_the_demo_catalogs_skus(quiet_broker: Any) -> None:
    seller = SellerFactory(username="seller2")
    out = run("--seller", "seller2", "--count", "10", "--seed", "1")
    demo = {sku for sku, _, _ in DEMO_CATALOG_PRODUCTS["seller2"]}
    assert set(OrderLine.objects.filter(order__seller=seller).values_list("sku", flat=True)) <= demo
    assert "demo catalog" in out


def test_wait_fails_clearly_when_the_platform_never_gets_the_orders(
    seller: Seller, quiet_broker: Any
) -> None:
    with pytest.raises(CommandError, match="is the worker running and the seller connected"):
        run("--seller", seller.user.username, "--count", "1", "--wait", "0.2")
