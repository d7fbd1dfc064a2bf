"""The seller's listings tell the truth: the status the marketplace gave each one (live,
refused with the reason, out of stock, inactive), a filter by each, prices with their
currency, images as placeholders that link out (the CSP loads no outside image), and the
page the listing-status file links to leads with the status and the reason."""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import urlsplit

import pytest
from django.utils import timezone

from marketplace.catalog.listing_status.status_file import listing_url
from marketplace.catalog.models import Listing, RejectedSku
from sellers.models import Seller
from tests.support.app_fixtures import page_text, signed_in
from tests.support.factories import ListingFactory

pytestmark = pytest.mark.django_db

REASON = "gtin 1234 is not a valid GTIN (check digit)"


def _catalog(seller: Seller) -> dict[str, Listing]:
    listings = {
        "live": ListingFactory(seller=seller, sku="LIVE-1", quantity=4, price=Decimal("1234.5")),
        "refused": ListingFactory(seller=seller, sku="REFUSED-1", quantity=4),
        "empty": ListingFactory(seller=seller, sku="EMPTY-1", quantity=0),
        "gone": ListingFactory(seller=seller, sku="GONE-1", active=False),
    }
    RejectedSku.objects.create(
        seller=seller, sku="REFUSED-1", reason=REASON, run_id=1, updated_at=timezone.now()
    )
    RejectedSku.objects.create(
        seller=seller,
        sku="NEVER-LISTED",
        reason="price is missing",
        run_id=1,
        updated_at=timezone.now(),
    )
    return listings


def test_each_listing_shows_the_status_the_marketplace_gave_it(seller: Seller) -> None:
    _catalog(seller)
    page = page_text(signed_in(seller.user).get("/sellers/catalog/"))

    assert "1 live, 1 refused, 1 out of stock, 1 inactive" in page
    assert 'data-sku="REFUSED-1" data-status="refused"' in page
    assert REASON in page
    assert 'data-sku="EMPTY-1" data-status="out_of_stock"' in page
    assert 'data-sku="GONE-1" data-status="inactive"' in page
    assert 'data-sku="LIVE-1" data-status="live"' in page
    assert "$1,234.50" in page  # the price with its currency (MARKETPLACE_CURRENCY)
    assert "NEVER-LISTED" in page
    assert "price is missing" in page


@pytest.mark.parametrize(
    ("status", "shown", "hidden"),
    [
        ("refused", "REFUSED-1", "LIVE-1"),
        ("out_of_stock", "EMPTY-1", "REFUSED-1"),
        ("inactive", "GONE-1", "EMPTY-1"),
        ("live", "LIVE-1", "GONE-1"),
    ],
)
def test_the_listings_filter_by_each_status(
    seller: Seller, status: str, shown: str, hidden: str
) -> None:
    _catalog(seller)
    page = page_text(signed_in(seller.user).get(f"/sellers/catalog/?status={status}"))
    assert f'data-sku="{shown}"' in page
    assert f'data-sku="{hidden}"' not in page


def test_the_status_files_link_leads_with_the_status_and_the_reason(seller: Seller) -> None:
    refused = _catalog(seller)["refused"]
    url = urlsplit(listing_url(refused.pk)).path
    assert url == f"/sellers/catalog/listings/{refused.pk}/"

    page = page_text(signed_in(seller.user).get(url))

    verdict = page.index('id="listing-verdict"')
    assert verdict < page.index("<h1>")
    assert page.index(REASON) < page.index("<h1>")
    assert ">Refused</span>" in page
    assert "This product is not on the marketplace." in page


def test_an_outside_image_is_a_placeholder_link_never_its_url_as_text(seller: Seller) -> None:
    image = "https://cdn.example.com/images/mug-red.jpg"
    listing = ListingFactory(seller=seller, sku="IMG-1", image_link=image)
    client = signed_in(seller.user)

    for url in ("/sellers/catalog/", f"/sellers/catalog/listings/{listing.pk}/"):
        page = page_text(client.get(url))
        assert f'class="thumb" href="{image}"' in page
        assert f">{image}<" not in page
        assert "<img" not in page
