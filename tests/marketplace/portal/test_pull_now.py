"""The seller's own Pull now on the portal: queued for their own connection only,
rate-limited per seller with a clear message, never for staff or strangers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from marketplace.sync.models import SellerSync
from sellers.models import Seller
from tests.support.app_fixtures import page_text, signed_in
from tests.support.factories import PlatformConnectionFactory

URL = "/sellers/pull/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def live_seller(seller: Seller) -> Seller:
    PlatformConnectionFactory(seller=seller)
    return seller


def test_the_portal_home_offers_pull_now_to_a_connected_seller(
    live_seller: Seller, seller_client: Client
) -> None:
    body = page_text(seller_client.get("/sellers/"))
    assert 'id="pull-now"' in body
    assert f'action="{URL}"' in body


def test_pull_now_queues_then_is_rate_limited_with_a_clear_message(
    live_seller: Seller,
    seller_client: Client,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.PORTAL_PULL_NOW_MIN_INTERVAL_SECONDS = 60
    # When the seller presses Pull now
    with django_capture_on_commit_callbacks() as queued:
        response = seller_client.post(URL)
    # Then a pull of their seller is queued and they are sent back home with the news
    assert response.status_code == 303
    assert response["Location"] == "/sellers/"
    assert len(queued) == 1
    first = SellerSync.objects.get(seller=live_seller).pull_now_requested_at
    assert first is not None
    home = page_text(seller_client.get("/sellers/"))
    assert "Pull queued" in home

    # When they press it again at once
    with django_capture_on_commit_callbacks() as queued_again:
        again = seller_client.post(URL)
    # Then nothing is queued: 429, how long to wait, in words and in Retry-After
    text = page_text(again, 429)
    assert queued_again == []
    assert "once every 60 seconds" in text
    assert "Try again in" in text
    assert 1 <= int(again["Retry-After"]) <= 60
    assert SellerSync.objects.get(seller=live_seller).pull_now_requested_at == first

    # And once the interval has passed, it works again
    SellerSync.objects.update(pull_now_requested_at=timezone.now() - timedelta(seconds=61))
    with django_capture_on_commit_callbacks() as queued_later:
        assert seller_client.post(URL).status_code == 303
    assert len(queued_later) == 1


def test_the_rate_limit_is_per_seller(
    live_seller: Seller, other_seller: Seller, seller_client: Client
) -> None:
    PlatformConnectionFactory(seller=other_seller)
    assert seller_client.post(URL).status_code == 303
    assert signed_in(other_seller.user).post(URL).status_code == 303


def test_pull_now_without_a_live_connection_is_409(seller: Seller, seller_client: Client) -> None:
    PlatformConnectionFactory(seller=seller, needs_reauth=True)
    text = page_text(seller_client.post(URL), 409)
    assert "not connected" in text
    assert not SellerSync.objects.filter(pull_now_requested_at__isnull=False).exists()
    assert 'id="pull-now"' not in page_text(seller_client.get("/sellers/"))


def test_pull_now_is_a_seller_only_post(
    live_seller: Seller, seller_client: Client, staff_client: Client
) -> None:
    assert seller_client.get(URL).status_code == 405
    assert staff_client.post(URL).status_code == 403
    anonymous = Client().post(URL)
    assert anonymous.status_code == 302
    assert "login" in anonymous["Location"]
    assert not SellerSync.objects.filter(pull_now_requested_at__isnull=False).exists()


def test_pull_now_needs_the_csrf_token(live_seller: Seller) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(live_seller.user)
    assert client.post(URL).status_code == 403
