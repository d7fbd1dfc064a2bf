"""The seller portal in Chromium, at a desktop and a 390 px phone width: the refused
listing with its reason, the money on an order, the completed return on the order's
page, a filtered CSV export whose rows are the filtered list's, the whole navigation on
a phone, and no page wider than the window."""

from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from marketplace.catalog.models import RejectedSku
from marketplace.orders.models import Order
from marketplace.orders.validation import ProblemCode
from sellers.models import Seller
from tests.marketplace.dashboard.test_browser import sign_in
from tests.marketplace.portal.builders import (
    completed_return,
    days_ago,
    money_order,
    open_return,
    problem,
)
from tests.support.factories import ListingFactory, PlatformConnectionFactory

pytestmark = pytest.mark.browser

SIZES = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
REASON = "gtin 0000000000000 is not a valid GTIN (check digit)"


@pytest.fixture(params=list(SIZES))
def screen(request: pytest.FixtureRequest, page: Page) -> str:
    page.set_viewport_size(SIZES[request.param])
    return str(request.param)


@pytest.fixture
def shop(seller: Seller) -> dict[str, Any]:
    """A seller's catalog and orders: a refused listing, an order with money and a
    completed return, late and problem orders for the filters."""
    PlatformConnectionFactory(seller=seller)
    refused = ListingFactory(
        seller=seller,
        sku="MUG-REFUSED",
        title="A mug with a very long title that must wrap on a phone screen " * 2,
        image_link="https://cdn.example.com/img/" + "x" * 120 + ".jpg",
    )
    RejectedSku.objects.create(
        seller=seller, sku=refused.sku, reason=REASON, run_id=1, updated_at=timezone.now()
    )
    ListingFactory(seller=seller, sku="MUG-LIVE")
    order = money_order(seller=seller, number="MP-BROWSER", purchase_date=days_ago(2))
    completed_return(order, number="RET-DONE", refunded="12.00")
    open_return(order, number="RET-OPEN")
    now = timezone.now()
    for n in range(4):
        money_order(
            seller=seller,
            number=f"MP-LATE-{n}",
            purchase_date=days_ago(5 + n),
            latest_ship_date=now - timedelta(days=1),
        )
    fixed = money_order(seller=seller, number="MP-PROBLEM", purchase_date=days_ago(1))
    problem(fixed, code=ProblemCode.INVALID_TRACKING_NUMBER, line="1")
    return {"refused": refused, "order": order}


def _no_overflow(page: Page, url: str) -> None:
    width = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert width <= 0, f"{url} is {width}px wider than the window"


def test_the_refused_listing_shows_its_reason(
    page: Page, live_server: Any, shop: dict[str, Any], screen: str
) -> None:
    sign_in(page, live_server.url, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/sellers/catalog/")
    page.locator("#listing-tabs a[data-status=refused]").click()

    card = page.locator(".listing-card[data-sku=MUG-REFUSED]")
    expect(card.locator(".listing-status")).to_have_text("Refused")
    expect(card).to_contain_text(REASON)
    expect(page.locator(".listing-card[data-sku=MUG-LIVE]")).to_have_count(0)
    expect(card.locator("a.thumb")).to_be_visible()  # a placeholder, not the URL as text
    _no_overflow(page, "catalog")

    card.locator("a", has_text="MUG-REFUSED").click()
    verdict = page.locator("#listing-verdict")
    expect(verdict.locator("#listing-status")).to_have_text("Refused")
    expect(verdict).to_contain_text(REASON)
    assert verdict.bounding_box()["y"] < page.locator("h1").bounding_box()["y"]  # type: ignore[index]
    _no_overflow(page, "listing")


def test_the_money_and_the_completed_return_on_the_order_page(
    page: Page, live_server: Any, shop: dict[str, Any], screen: str
) -> None:
    order: Order = shop["order"]
    sign_in(page, live_server.url, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/sellers/orders/{order.pk}/")

    expect(page.locator("#order-total")).to_have_text("€29.50")
    expect(page.locator("#money-totals")).to_contain_text("€1.60")
    expect(page.locator("#money-refunded")).to_have_text("€12.00")
    done = page.locator(".return-card[data-return=RET-DONE]")
    expect(done).to_contain_text("Completed")
    expect(done.locator(".return-refunded")).to_have_text("€12.00")
    expect(page.locator(".return-card[data-return=RET-OPEN]")).to_contain_text(
        "Waiting for your answer"
    )
    _no_overflow(page, "order")


def test_a_filtered_csv_export_has_the_rows_of_the_filtered_list(
    page: Page, live_server: Any, shop: dict[str, Any], screen: str, tmp_path: Path
) -> None:
    sign_in(page, live_server.url, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/sellers/orders/")
    page.locator("#only-late").check()
    page.locator("#order-search select[name=sort]").select_option("placed_asc")
    page.locator("#order-search button[type=submit]").click()
    page.wait_for_load_state()

    listed = page.locator("#portal-orders tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.order)"
    )
    with page.expect_download() as download:
        page.locator("#export-csv").click()
    saved = tmp_path / "orders.csv"
    download.value.save_as(saved)
    with saved.open(encoding="utf-8", newline="") as file:
        rows = list(csv.reader(file))

    assert listed == ["MP-LATE-3", "MP-LATE-2", "MP-LATE-1", "MP-LATE-0"]
    assert [row[0] for row in rows[1:]] == listed
    assert all(row[7] == "yes" for row in rows[1:])
    _no_overflow(page, "orders")


def test_every_seller_page_fits_and_the_navigation_is_whole(
    page: Page, live_server: Any, shop: dict[str, Any], screen: str
) -> None:
    order: Order = shop["order"]
    sign_in(page, live_server.url, "alice", "alice-pass-123")
    for path in (
        "/sellers/",
        "/sellers/orders/",
        f"/sellers/orders/{order.pk}/",
        "/sellers/orders/returns/",
        "/sellers/orders/returns/history/",
        "/sellers/catalog/",
        f"/sellers/catalog/listings/{shop['refused'].pk}/",
        "/sellers/settings/",
        "/sellers/connection/",
        "/api/intake/docs",
    ):
        response = page.goto(live_server.url + path)
        assert response is not None
        assert response.status == 200, path
        page.wait_for_load_state("load")
        if path == "/api/intake/docs":
            # Swagger UI draws the operations after the page loaded: measure those.
            page.locator(".opblock").first.wait_for()
            page.locator(".opblock-summary").first.click()
            page.locator(".opblock-body").first.wait_for()
        _no_overflow(page, path)
    page.goto(f"{live_server.url}/sellers/")
    window = page.viewport_size["width"]  # type: ignore[index]
    for link in page.locator("nav.nav a").all():
        box = link.bounding_box()
        assert box is not None
        assert box["x"] >= 0, link.inner_text()
        assert box["x"] + box["width"] <= window, f"{link.inner_text()} is cut off"
    expect(page.locator("nav.nav a", has_text="Platform connection")).to_be_visible()
