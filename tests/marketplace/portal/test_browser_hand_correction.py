"""Playing the seller by hand in a real browser: pause the simulated seller on the sandbox's
v2 seller page, ship a package with a bad tracking number on the v2 order page, see the
problem in the app's portal, correct the package on the sandbox's page, and see the
problem gone and the order shipped in the portal after the next pull."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.orders.intake_schema import OrderIn
from marketplace.orders.models import Order, OrderSync, Shipment, ValidationProblem
from marketplace.orders.services.intake import order_create
from marketplace.sync.pull import seller_pull
from sellers.models import Seller
from tests.marketplace.conftest import order_body
from tests.marketplace.dashboard.test_browser import sign_in
from tests.support.app_fixtures import PLATFORM_SELLER, Platform

pytestmark = pytest.mark.browser

BAD_UPS, FIXED_UPS = "1Z12-BAD", "1ZFIXED0000000001A"


def test_a_bad_package_corrected_on_the_sandbox_page_closes_the_sellers_problem(
    page: Page, live_server: Any, platform: Platform, seller: Seller, eager_tasks: None
) -> None:
    platform.connect(seller)
    order, _ = order_create(data=OrderIn.model_validate(order_body("MP-HC1", seller="alice")))
    assert OrderSync.objects.get(order=order).status == "synced"
    sandbox = platform.sandbox
    assert sandbox.v2_import(PLATFORM_SELLER) == 1

    # The sandbox's v2 seller page: pause the simulated seller before playing it by hand.
    page.goto(f"{sandbox.base_url}/sandbox/v2/sellers/{PLATFORM_SELLER}/")
    expect(page.locator("#simulator-state")).to_have_text("working")
    page.get_by_role("button", name="Pause the simulated seller").click()
    expect(page.locator("#simulator-state")).to_have_text("paused")
    assert sandbox.control("GET", f"/v2/sellers/{PLATFORM_SELLER}/simulator") == {"paused": True}

    # Ship everything in one package, with a tracking number UPS never issued.
    page.locator("#v2-orders a").first.click()
    ship = page.locator("#ship-form")
    ship.locator("select[name=carrier]").select_option("UPS")
    ship.locator("input[name=tracking_number]").fill(BAD_UPS)
    ship.get_by_role("button", name="Ship package").click()
    expect(page.locator("p.note")).to_contain_text(f"shipped (UPS {BAD_UPS})")
    (package,) = sandbox.v2_order("MP-HC1")["fulfillments"]

    # The app pulls it, reports the problem and holds the order; the seller sees it.
    assert not seller_pull(seller_id=seller.id).orders.error
    problems = ValidationProblem.objects.filter(order=order)
    # One per line the package carries.
    assert sorted(problems.values_list("code", "mp_line_number")) == [
        ("INVALID_TRACKING_NUMBER", "1"),
        ("INVALID_TRACKING_NUMBER", "2"),
    ]
    assert not problems.filter(reported_at__isnull=True).exists()
    reported = sandbox.order("MP-HC1")["errors"]
    assert len(reported) == 2
    portal = page.context.new_page()
    sign_in(portal, live_server.url, "alice", "alice-pass-123")
    portal.goto(f"{live_server.url}/sellers/orders/{order.id}/")
    expect(portal.locator(".problem[data-code=INVALID_TRACKING_NUMBER]").first).to_be_visible()
    portal.goto(f"{live_server.url}/sellers/")
    expect(portal.locator("body")).to_contain_text("MP-HC1")

    # Correct the package on the sandbox's order page.
    correct = page.locator(f"#correct-{package['id']}")
    correct.locator("input[name=tracking_number]").fill(FIXED_UPS)
    correct.get_by_role("button", name="Correct package").click()
    expect(page.locator("p.note")).to_contain_text(f"corrected (UPS {FIXED_UPS})")
    expect(page.locator("#packages")).to_contain_text(FIXED_UPS)
    expect(page.locator("#events")).to_contain_text("fulfillment_updated")

    # The next pull stores the corrected package, resolves the problem and settles.
    assert not seller_pull(seller_id=seller.id).orders.error
    order.refresh_from_db()
    assert order.state == "SHIPPED"
    assert list(
        Shipment.objects.filter(line__order=order).values_list("tracking_number", flat=True)
    ) == [FIXED_UPS, FIXED_UPS]
    assert not problems.filter(resolved_at__isnull=True).exists()
    assert sandbox.order("MP-HC1")["errors"] == reported  # reported once, never again
    portal.goto(f"{live_server.url}/sellers/orders/{order.id}/")
    expect(portal.locator(".problem")).to_have_count(0)
    expect(portal.locator("body")).to_contain_text(FIXED_UPS)
    expect(portal.locator("body")).not_to_contain_text(BAD_UPS)
    portal.goto(f"{live_server.url}/sellers/")
    expect(portal.locator("body")).not_to_contain_text("Tracking number not valid")

    # The order is no longer awaiting shipment: the page offers no more corrections.
    page.reload()
    expect(page.locator(f"#correct-{package['id']}")).to_have_count(0)

    # And the simulated seller is resumed from its page.
    page.goto(f"{sandbox.base_url}/sandbox/v2/sellers/{PLATFORM_SELLER}/")
    page.get_by_role("button", name="Resume the simulated seller").click()
    expect(page.locator("#simulator-state")).to_have_text("working")
    assert sandbox.control("GET", f"/v2/sellers/{PLATFORM_SELLER}/simulator") == {"paused": False}
    assert Order.objects.get(pk=order.pk).state == "SHIPPED"
    assert sandbox.violations()["total"] == 0
