"""The catalog pages: who may see what, listings search/filter/pages, order lines
linked to their listing and flagged without one."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from marketplace.catalog.models import FeedRun, Listing, PlatformApiAccess
from marketplace.orders.intake_schema import OrderIn
from marketplace.orders.services.intake import order_create
from sellers.models import Seller
from tests.marketplace.conftest import order_body
from tests.support.app_fixtures import page_text, signed_in
from tests.support.factories import CatalogSourceFactory, ListingFactory

pytestmark = pytest.mark.django_db


def listing(seller: Seller, sku: str, *, active: bool = True, title: str = "") -> Listing:
    return ListingFactory(seller=seller, sku=sku, title=title or f"Title {sku}", active=active)


def test_staff_pages_are_for_staff_only(seller: Seller, staff_user: Any) -> None:
    seller_client = signed_in(seller.user)
    for url in (
        "/dashboard/catalog/",
        "/dashboard/catalog/api-access/",
        f"/dashboard/catalog/sellers/{seller.pk}/",
    ):
        refused = page_text(seller_client.get(url), status=403)
        assert "This page is for marketplace staff" in refused, url
        assert 'href="/dashboard/sellers/"' in page_text(signed_in(staff_user).get(url)), url
    anonymous = Client().get("/dashboard/catalog/api-access/")
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/sellers/login/?next=")


def test_the_portal_lists_only_the_sellers_own_listings_with_search_and_filter(
    seller: Seller, other_seller: Seller
) -> None:
    for n in range(60):
        listing(seller, f"A-{n:03d}", active=n % 3 != 0, title="Red mug" if n < 5 else "")
    listing(other_seller, "B-SECRET")
    client = signed_in(seller.user)

    page = page_text(client.get("/sellers/catalog/"))
    assert "A-000" in page
    assert "B-SECRET" not in page
    assert "Page 1 of 3" in page
    assert "40 live, 0 refused, 0 out of stock, 20 inactive" in page

    found = page_text(client.get("/sellers/catalog/?q=red+mug"))
    assert found.count("Red mug") == 5
    inactive = page_text(client.get("/sellers/catalog/?status=inactive"))
    assert "A-000" in inactive
    assert "A-001" not in inactive
    other = Listing.objects.get(sku="B-SECRET")
    not_found = page_text(client.get(f"/sellers/catalog/listings/{other.pk}/"), status=404)
    assert "B-SECRET" not in not_found
    own = Listing.objects.get(sku="A-001")
    assert "A-001" in page_text(client.get(f"/sellers/catalog/listings/{own.pk}/"))


def test_the_portal_says_which_database_feeds_the_catalog(seller: Seller) -> None:
    client = signed_in(seller.user)
    assert "No platform database feeds your catalog yet" in page_text(
        client.get("/sellers/catalog/")
    )
    CatalogSourceFactory(
        seller=seller,
        account_id="1",
        account_name="Demo Seller",
        db_id="4",
        db_name="Demo Seller products",
    )

    page = page_text(client.get("/sellers/catalog/"))

    assert "Demo Seller products" in page


def test_order_lines_link_to_their_listing_and_unlisted_skus_are_flagged(
    seller: Seller, staff_user: Any
) -> None:
    red = listing(seller, "SKU-RED")
    order, _ = order_create(data=OrderIn.model_validate(order_body("MP-L1", seller="alice")))

    staff_page = page_text(signed_in(staff_user).get(f"/dashboard/orders/{order.pk}/"))
    portal_page = page_text(signed_in(seller.user).get(f"/sellers/orders/{order.pk}/"))

    assert f'href="/dashboard/catalog/listings/{red.pk}/"' in staff_page
    assert f'href="/sellers/catalog/listings/{red.pk}/"' in portal_page
    for page in (staff_page, portal_page):
        assert "1 SKU of this order has no active listing" in page
        assert "<code>SKU-BLUE</code>" in page
    # The order itself went ahead: it is not blocked by the missing listing
    assert order.sync.status in {"pending", "waiting_for_connection"}


def test_a_failed_run_shows_its_reason_and_staff_can_retry_it(
    seller: Seller, staff_user: Any
) -> None:
    run = FeedRun.objects.create(
        seller=seller,
        file_path="x.csv",
        status="failed",
        error="the compressed file is truncated or corrupt",
        rejections=[{"line": 4, "sku": "A", "reason": "price -1 is negative"}],
        rejected=1,
    )
    staff = signed_in(staff_user)
    page = page_text(staff.get(f"/dashboard/catalog/runs/{run.pk}/"))
    assert "truncated or corrupt" in page
    assert "price -1 is negative" in page
    assert signed_in(seller.user).get(f"/sellers/catalog/runs/{run.pk}/").status_code == 200

    staff.post(f"/dashboard/catalog/runs/{run.pk}/retry/")

    run.refresh_from_db()
    assert run.status in {"received", "failed"}  # queued again (the broker runs it later)
    assert run.retried_by == staff_user


def test_the_overview_warns_staff_when_the_api_access_needs_sign_in(staff_user: Any) -> None:
    PlatformApiAccess.objects.create(pk=1, state="needs_sign_in", username="api")

    page = page_text(signed_in(staff_user).get("/dashboard/"))

    assert "Platform API access needs sign-in" in page


def test_staff_apply_a_held_run_after_a_confirmation_and_sellers_cannot(
    seller: Seller, staff_user: Any
) -> None:
    run = FeedRun.objects.create(
        seller=seller,
        file_path="x.csv",
        status="held",
        error="held: would deactivate 8 of 10 active listings (80 %); nothing was applied "
        "until staff confirm it",
    )
    staff = signed_in(staff_user)
    page = page_text(staff.get(f"/dashboard/catalog/runs/{run.pk}/"))
    assert "would deactivate 8 of 10 active listings (80 %)" in page
    assert 'id="confirm-run"' in page
    url = f"/dashboard/catalog/runs/{run.pk}/confirm/"
    assert signed_in(seller.user).post(url, {"confirmed": "yes"}).status_code == 403

    asked = page_text(staff.post(url))
    run.refresh_from_db()
    assert run.status == "held"  # asked first
    assert "Held: would deactivate 8 of 10" in asked

    staff.post(url, {"confirmed": "yes"})

    run.refresh_from_db()
    assert run.status in {"received", "failed"}  # queued (the broker runs it later)
    assert run.deactivation_confirmed_by == staff_user
