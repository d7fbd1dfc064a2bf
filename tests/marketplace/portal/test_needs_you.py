""" "What needs you" lists everything waiting for the seller (a problem on an order, a
return to answer, refused products, a lost connection), and the e-mail digest sends it
grouped, at most once per SELLER_DIGEST_MINUTES, only when something is new, and only
the kinds the seller left switched on in their settings."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone

from marketplace import glossary
from marketplace.catalog.models import RejectedSku
from marketplace.orders.validation import ProblemCode
from marketplace.portal.digest import seller_digest_send, seller_digests_send
from marketplace.portal.models import SellerNotifications
from sellers.models import Seller
from tests.marketplace.portal.builders import money_order, open_return, problem
from tests.support.app_fixtures import page_text, signed_in
from tests.support.factories import ListingFactory, PlatformConnectionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting(seller: Seller) -> Seller:
    """A seller with one of each kind waiting for them."""
    PlatformConnectionFactory(seller=seller, needs_reauth=True)
    order = money_order(seller=seller, number="MP-NEEDS")
    problem(order, code=ProblemCode.INVALID_TRACKING_NUMBER, line="1", message="a")
    problem(order, code=ProblemCode.INVALID_TRACKING_NUMBER, line="2", message="b")
    open_return(order, number="RET-ASK")
    listing = ListingFactory(seller=seller, sku="MUG-BAD")
    RejectedSku.objects.create(
        seller=seller, sku=listing.sku, reason="image_link is missing", run_id=3,
        updated_at=timezone.now(),
    )  # fmt: skip
    return seller


def test_the_home_lists_every_kind_with_links_to_where_it_is_fixed(waiting: Seller) -> None:
    page = page_text(signed_in(waiting.user).get("/sellers/"))

    assert 'id="todo-connection"' in page
    assert "Order MP-NEEDS: Tracking number not valid (lines 1, 2)" in page
    assert page.count("Order MP-NEEDS: Tracking number not valid") == 1  # one per order
    assert 'id="todo-returns"' in page
    assert "return RET-ASK waits for your answer" in page
    assert 'id="todo-listings"' in page
    assert "MUG-BAD: refused: image_link is missing" in page
    listing_id = waiting.listings.get(sku="MUG-BAD").pk
    assert f'href="/sellers/catalog/listings/{listing_id}/"' in page
    assert 'id="todo-none"' not in page


def test_seller_pages_use_plain_words(waiting: Seller) -> None:
    client = signed_in(waiting.user)
    order_id = waiting.orders.get().pk
    for url in (
        "/sellers/",
        "/sellers/orders/",
        f"/sellers/orders/{order_id}/",
        "/sellers/orders/returns/history/",
        "/sellers/catalog/",
        "/sellers/settings/",
        "/sellers/connection/",
    ):
        text = page_text(client.get(url)).lower()
        for word in glossary.ENGINEER_WORDS:
            assert word not in text, (url, word)


def test_one_digest_groups_everything_then_waits_for_the_interval(
    waiting: Seller, settings: Any
) -> None:
    settings.SELLER_DIGEST_MINUTES = 30
    now = timezone.now()

    assert seller_digests_send(now=now) == 1
    assert seller_digest_send(seller=waiting, now=now + timedelta(minutes=5)).why == "too soon"

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [waiting.user.email]
    assert message.subject == "4 things need you"
    for heading in (
        "Your platform connection (1):",
        "Orders with a problem to fix (1):",
        "Returns waiting for your answer (1):",
        "Products the marketplace refused (1):",
    ):
        assert heading in message.body
    assert "/sellers/settings/" in message.body
    assert f"/sellers/orders/{waiting.orders.get().pk}/#problems" in message.body


def test_after_the_interval_only_something_new_sends_again(waiting: Seller, settings: Any) -> None:
    settings.SELLER_DIGEST_MINUTES = 30
    now = timezone.now()
    assert seller_digest_send(seller=waiting, now=now).sent

    later = now + timedelta(minutes=31)
    assert seller_digest_send(seller=waiting, now=later).why == "nothing new"
    open_return(waiting.orders.get(), number="RET-NEW")
    assert seller_digest_send(seller=waiting, now=later).sent
    assert len(mail.outbox) == 2


def test_each_kind_has_an_off_switch_in_the_settings_page(waiting: Seller) -> None:
    client = signed_in(waiting.user)
    assert "The marketplace refused one of my products" in page_text(
        client.get("/sellers/settings/")
    )

    saved = client.post("/sellers/settings/", {"email_problems": "on", "email_returns": "on"})

    assert saved.status_code == 303
    prefs = SellerNotifications.objects.get(seller=waiting)
    assert (prefs.email_problems, prefs.email_returns) == (True, True)
    assert (prefs.email_listings, prefs.email_connection) == (False, False)
    assert seller_digest_send(seller=waiting, now=timezone.now()).sent
    body = mail.outbox[0].body
    assert "Orders with a problem to fix" in body
    assert "Returns waiting for your answer" in body
    assert "Products the marketplace refused" not in body
    assert "Your platform connection" not in body


def test_with_every_switch_off_nothing_is_sent(waiting: Seller) -> None:
    SellerNotifications.objects.create(
        seller=waiting,
        email_problems=False,
        email_returns=False,
        email_listings=False,
        email_connection=False,
    )
    assert seller_digest_send(seller=waiting, now=timezone.now()).why == "nothing new"
    assert mail.outbox == []
