"""A seller in a real browser: their shipment with a working tracking link, a validation
problem in plain words, and nobody else's orders or the dashboard."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.orders.intake_schema import OrderIn
from marketplace.orders.models import OrderSync
from marketplace.orders.services.intake import order_create
from marketplace.sync.pull import seller_pull
from sellers.models import Seller
from tests.marketplace.conftest import order_body
from tests.marketplace.dashboard.test_browser import sign_in
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.browser


def test_seller_sees_shipment_tracking_link_and_validation_problem(
    page: Page, live_server: Any, platform: Platform, seller: Seller, eager_tasks: None
) -> None:
    # Given a pushed order the seller shipped: line 1 properly, line 2 with a bad number
    platform.connect(seller)
    order, _ = order_create(data=OrderIn.model_validate(order_body("MP-S1", seller="alice")))
    assert OrderSync.objects.get(order=order).status == "synced"
    good = platform.sandbox.ship("MP-S1", lines=[{"mp_line_number": "1", "quantity": 3}])
    platform.sandbox.ship(
        "MP-S1", lines=[{"mp_line_number": "2", "quantity": 1}], bad="bad_tracking_number"
    )
    shipment = next(f for f in good["fulfillments"] if f["mp_line_number"] == "1")["shipments"][0]
    # When the pull service reads it
    result = seller_pull(seller_id=seller.id).orders
    assert result.ran
    assert not result.error
    # Then the seller sees the shipment with a tracking link that opens the carrier's page
    page.context.route(
        shipment["tracking_url"], lambda route: route.fulfill(body="<h1>Parcel on its way</h1>")
    )
    sign_in(page, live_server.url, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/sellers/orders/")
    row = page.locator("#portal-orders tbody tr", has_text="MP-S1")
    # The platform has the order, but a problem is open: never "Up to date" then.
    expect(row).to_contain_text("Needs your fix")
    expect(row).not_to_contain_text("Up to date")
    expect(row).to_contain_text("1 to fix")
    link = row.locator("a.tracking", has_text=shipment["tracking_number"])
    expect(link).to_have_attribute("href", shipment["tracking_url"])
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener")
    with page.expect_popup() as popup:
        link.click()
    expect(popup.value.locator("h1")).to_have_text("Parcel on its way")
    popup.value.close()
    # And the problem, in plain words, with what to fix
    row.locator("a", has_text="MP-S1").click()
    problem = page.locator(".problem[data-code=INVALID_TRACKING_NUMBER]")
    expect(problem).to_contain_text("Tracking number not valid")
    expect(problem).to_contain_text("What to do:")
    expect(problem).to_contain_text("line 2")


def test_seller_cannot_open_another_sellers_order_or_the_dashboard(
    page: Page, live_server: Any, seller: Seller, other_seller: Seller
) -> None:
    theirs, _ = order_create(data=OrderIn.model_validate(order_body("MP-S2", seller="bob")))
    sign_in(page, live_server.url, "alice", "alice-pass-123")
    response = page.goto(f"{live_server.url}/sellers/orders/{theirs.id}/")
    assert response is not None
    assert response.status == 404
    for path in ("/dashboard/", "/dashboard/sellers/", f"/dashboard/orders/{theirs.id}/"):
        response = page.goto(live_server.url + path)
        assert response is not None
        assert response.status == 403, path
        expect(page.locator("h1")).to_have_text("This page is for marketplace staff")
    page.goto(f"{live_server.url}/sellers/orders/")
    expect(page.locator("#orders")).to_contain_text("No orders yet.")
    expect(page.locator("#orders")).not_to_contain_text("MP-S2")
