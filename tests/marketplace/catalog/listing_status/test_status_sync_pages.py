"""The staff catalog pages' EDRTS parts: per seller, statuses waiting (and the oldest),
sent in the last hour, the last error; re-send all, retry and the on/off switch."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from marketplace.catalog.models import StatusChange, StatusSync
from sellers.models import Seller
from tests.support.app_fixtures import page_text, signed_in
from tests.support.factories import CatalogSourceFactory, ListingFactory, SellerFactory

pytestmark = pytest.mark.django_db


def test_the_sellers_page_shows_waiting_sent_oldest_and_the_last_error(
    seller: Seller, staff_client: Client
) -> None:
    CatalogSourceFactory(seller=seller)
    for n in range(3):
        ListingFactory(seller=seller, sku=f"A-{n}")
    StatusChange.objects.filter(seller=seller).update(
        created_at=timezone.now() - timedelta(minutes=2)
    )
    StatusChange.objects.create(
        seller=seller, sku="OLD", status="live", sent_at=timezone.now(), outcome="sent"
    )
    StatusSync.objects.create(
        seller=seller,
        failures=1,
        last_error="Sending statuses failed: HTTP 503",
        last_error_at=timezone.now(),
    )

    page = page_text(staff_client.get(f"/dashboard/catalog/sellers/{seller.pk}/"))

    assert "Live status updates (EDRTS)" in page
    assert 'id="status-sync-waiting">3 ' in page
    assert "oldest 2 min" in page
    assert 'id="status-sync-sent">1</dd>' in page
    assert "Sending statuses failed: HTTP 503" in page
    assert "Re-send all statuses" in page
    assert "Turn live status updates off" in page
    assert 'data-confirm="Turn live status updates off for' in page
    # No import is set up: the card does not point at one "above"
    assert "import above" not in page
    assert "Once the listing-status import is set up" in page

    overview = page_text(staff_client.get("/dashboard/catalog/"))
    assert "3 waiting" in overview
    assert "1 sent in the last hour" in overview
    assert "Live status updates: Sending statuses failed" in overview


def test_the_overview_reads_the_summaries_in_a_fixed_number_of_queries(
    staff_client: Client,
) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert staff_client.get("/dashboard/catalog/").status_code == 200
        return len(captured)

    seller = SellerFactory()
    CatalogSourceFactory(seller=seller)
    ListingFactory(seller=seller, sku="X")
    queries()  # the first visit creates the API access row
    few = queries()
    for _ in range(5):
        more = SellerFactory()
        CatalogSourceFactory(seller=more)
        ListingFactory(seller=more, sku="X")
        StatusSync.objects.create(seller=more)
    assert queries() == few


def test_re_send_all_and_the_switch(seller: Seller, staff_client: Client, settings: Any) -> None:
    CatalogSourceFactory(seller=seller)
    ListingFactory(seller=seller, sku="A")
    StatusChange.objects.update(sent_at=timezone.now(), outcome="sent")

    response = staff_client.post(f"/dashboard/catalog/sellers/{seller.pk}/status-sync/resend/")
    assert response.status_code == 302
    assert StatusChange.objects.filter(seller=seller, sent_at__isnull=True).count() == 1

    # Turning it off asks first (without JavaScript: a confirmation page) ...
    switch = f"/dashboard/catalog/sellers/{seller.pk}/status-sync/switch/"
    asked = page_text(staff_client.post(switch, {"enabled": "off"}))
    assert 'id="confirm-button"' in asked
    assert 'name="enabled" value="off"' in asked  # the confirmation sends the same choice
    assert not StatusSync.objects.filter(seller=seller, edrts_enabled=False).exists()
    # ... and acts once confirmed
    response = staff_client.post(switch, {"enabled": "off", "confirmed": "yes"})
    assert response.status_code == 302
    assert StatusSync.objects.get(seller=seller).edrts_enabled is False
    page = page_text(staff_client.get(f"/dashboard/catalog/sellers/{seller.pk}/"))
    assert "Turn live status updates on" in page
    assert "every hour while live updates are off" in page
    assert "import only" in page_text(staff_client.get("/dashboard/catalog/"))

    staff_client.post(
        f"/dashboard/catalog/sellers/{seller.pk}/status-sync/switch/", {"enabled": "on"}
    )
    assert StatusSync.objects.get(seller=seller).edrts_enabled is True

    StatusSync.objects.filter(seller=seller).update(failures=8)
    staff_client.post(f"/dashboard/catalog/sellers/{seller.pk}/status-sync/retry/")
    assert StatusSync.objects.get(seller=seller).failures == 0


def test_the_actions_are_for_staff_only(seller: Seller) -> None:
    CatalogSourceFactory(seller=seller)
    client = signed_in(seller.user)
    for action in ("resend", "retry", "switch"):
        response = client.post(f"/dashboard/catalog/sellers/{seller.pk}/status-sync/{action}/")
        assert response.status_code == 403
    assert not StatusSync.objects.filter(seller=seller, edrts_enabled=False).exists()
    assert Client().get(
        f"/dashboard/catalog/sellers/{seller.pk}/status-sync/resend/"
    ).status_code in (302, 405)
