"""Seller performance in a real browser (Playwright + Debian Chromium): staff sort the
sellers by late shipment rate, open a flagged seller, read the chart, click through to
the late orders; the seller reads their own page at 390 px, and never another's."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from marketplace.performance.refresh import scorecards_refresh
from tests.marketplace.dashboard.test_browser import sign_in
from tests.marketplace.performance.builders import NOW, Sellers, known_data
from tests.support.factories import password_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def world(settings: Any) -> Sellers:
    settings.PERFORMANCE_MIN_SAMPLE = 1
    sellers = known_data()
    # Five days of figures: the chart has a line to draw.
    for days_back in (4, 3, 2, 1):
        scorecards_refresh(now=NOW - timedelta(days=days_back), crossings=False)
    scorecards_refresh(now=NOW)
    return sellers


def test_staff_find_the_late_seller_and_the_orders_behind_the_figure(
    page: Page, live_server: Any, staff_user: Any, world: Sellers
) -> None:
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    page.goto(f"{live_server.url}/dashboard/sellers/")
    # Sorted by late shipment rate, worst first: Alice (50 %), flagged, comes first
    page.click("#sellers th >> text=Late ship.")
    expect(page).to_have_url(f"{live_server.url}/dashboard/sellers/?sort=-late_shipment")
    first = page.locator("#sellers tbody tr").first
    expect(first).to_contain_text("Alice's Shop")
    expect(first.locator('[data-measure="late_shipment"]')).to_contain_text("50.0 %")
    expect(first.locator("[data-flagged]")).to_be_visible()
    expect(page.locator("#sellers tbody tr").nth(1)).to_contain_text("Bob's Shop")
    # Filtered to sellers over the late shipment limit: Alice only
    page.select_option("#id_flagged", "late_shipment")
    page.click("#seller-filters button[type=submit]")
    expect(page.locator("#sellers tbody tr")).to_have_count(1)
    # The flagged seller's page: the measure over its limit, the chart of its trend
    page.click('#sellers [data-measure="late_shipment"] a')
    expect(page.locator("h1")).to_have_text("Performance of Alice's Shop")
    expect(page.locator("#measure-late_shipment")).to_have_class("over")
    expect(page.locator('[data-flag="late_shipment"]')).to_be_visible()
    chart = page.locator("#trend-chart svg.chart")
    expect(chart).to_be_visible()
    expect(chart.locator("circle.trend-point")).to_have_count(5)
    expect(chart.locator("polyline.trend-line")).to_have_count(1)
    expect(chart.locator("line.threshold")).to_have_count(1)
    # One click from the number to the late orders
    page.click("#orders-late_shipment")
    expect(page.locator("h1")).to_have_text(
        "Shipped late, or still unshipped after the ship-by day"
    )
    rows = page.locator("#behind tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#behind")).to_contain_text("A-2")
    expect(page.locator("#behind")).to_contain_text("A-4")
    # ... each opening the order
    page.click("#behind >> text=A-4")
    expect(page.locator("h1")).to_contain_text("A-4")


def test_the_seller_reads_their_own_page_on_a_phone_and_never_anothers(
    browser: Browser, live_server: Any, world: Sellers
) -> None:
    with browser.new_context(viewport=PHONE) as context:
        page = context.new_page()
        sign_in(page, live_server.url, "alice", password_of("alice"))
        page.click("nav >> text=Performance")
        expect(page.locator("h1")).to_have_text("Performance")
        expect(page.locator("#measure-late_shipment")).to_contain_text("50.0 %")
        expect(page.locator("#flagged")).to_be_visible()
        page.locator("#measure-late_shipment summary").click()
        expect(page.locator("#measure-late_shipment")).to_contain_text("What you can do:")
        expect(page.locator("#trend-chart svg.chart")).to_be_visible()
        chart_box = page.locator("#trend-chart svg.chart").bounding_box()
        assert chart_box is not None
        assert chart_box["width"] <= 390
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        page.click("#orders-late_shipment")
        expect(page.locator("#behind")).to_contain_text("A-2")
    with browser.new_context(viewport=PHONE) as context:
        page = context.new_page()
        sign_in(page, live_server.url, "bob", password_of("bob"))
        page.goto(f"{live_server.url}/sellers/performance/")
        expect(page.locator("#measure-late_shipment")).to_contain_text("0.0 %")
        expect(page.locator("body")).not_to_contain_text("50.0 %")
        page.goto(f"{live_server.url}/sellers/performance/orders/late/?window=90")
        expect(page.locator("body")).not_to_contain_text("A-2")
        response = page.goto(f"{live_server.url}/dashboard/performance/sellers/{world.alice.pk}/")
        assert response is not None
        assert response.status == 403
