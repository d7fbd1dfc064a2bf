"""Staff in a real browser (Playwright + Debian Chromium) against the live app and the sandbox."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.orders.intake_schema import OrderIn
from marketplace.orders.models import OrderSync
from marketplace.orders.services.intake import order_create
from sellers.models import Seller
from tests.marketplace.conftest import order_body
from tests.support.app_fixtures import PLATFORM_SELLER, Platform
from tests.support.factories import SellerFactory

pytestmark = pytest.mark.browser


def sign_in(page: Page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/sellers/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-button")
    page.wait_for_load_state()


def test_staff_retries_a_failed_order_and_it_becomes_synced(
    page: Page,
    live_server: Any,
    platform: Platform,
    seller: Seller,
    staff_user: Any,
    eager_tasks: None,
    settings: Any,
) -> None:
    # Given an order whose push really failed at the platform
    settings.PUSH_MAX_FAILURES = 1
    platform.connect(seller)
    platform.sandbox.set_faults(endpoint="put_order", kind="500")
    order, _ = order_create(data=OrderIn.model_validate(order_body("MP-B1", seller="alice")))
    assert OrderSync.objects.get(order=order).status == "failed"
    platform.sandbox.clear_faults()
    # When staff find it on the dashboard, open it and retry
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    page.goto(f"{live_server.url}/dashboard/")
    page.click("#failed-orders >> text=MP-B1")
    expect(page.locator("#sync-status")).to_have_text("Failed")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#retry-button")
    # Then the page and the platform agree: synced
    expect(page.locator(".msg-success")).to_contain_text("Pushed")
    expect(page.locator("#sync-status")).to_have_text("Synced")
    expect(page.locator("#history")).to_contain_text("Retried by an admin")
    assert platform.sandbox.order("MP-B1")["marketplace_state"] == "AWAITING_SHIPMENT"
    # And the overview no longer lists it
    page.click("nav >> text=Overview")
    expect(page.locator("#failed-orders")).to_contain_text("No failed pushes.")


def test_staff_sees_a_seller_who_needs_reauthorization(
    page: Page,
    live_server: Any,
    platform: Platform,
    seller: Seller,
    staff_user: Any,
) -> None:
    # Given a seller whose grant the platform revoked
    platform.connect(seller)
    platform.sandbox.revoke(PLATFORM_SELLER)
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    page.goto(f"{live_server.url}/dashboard/sellers/{seller.id}/")
    expect(page.locator("#seller-state")).to_have_text("Connected")
    # When staff refresh the connection (and confirm)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#refresh-button")
    # Then the platform's refusal shows, and the seller is flagged everywhere
    expect(page.locator(".msg-error")).to_contain_text("the seller must reconnect")
    expect(page.locator("#seller-state")).to_have_text("Needs re-authorization")
    expect(page.locator("#timeline")).to_contain_text("Needs re-authorization")
    page.click("nav >> text=Overview")
    expect(page.locator("#needs-reauth")).to_contain_text("Alice's Shop")
    page.click("nav >> text=Sellers")
    page.select_option("select[name=state]", "needs_reauth")
    page.click("#seller-filters button[type=submit]")
    expect(page.locator("#sellers tbody tr")).to_have_count(1)
    expect(page.locator("#sellers")).to_contain_text("Needs re-authorization")


def test_only_disconnect_asks_and_without_javascript_a_confirmation_page_is_shown(
    page: Page, live_server: Any, platform: Platform, seller: Seller, staff_user: Any
) -> None:
    platform.connect(seller)
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    page.goto(f"{live_server.url}/dashboard/sellers/{seller.id}/")
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    # Pull now is harmless: it acts at once, nothing asks
    page.click("#pull-button")
    expect(page.locator(".msg-success")).to_contain_text("Pull")
    assert dialogs == []
    # Disconnect cannot be undone: cancelling the browser's question sends nothing ...
    page.click("#disconnect-button")
    expect(page).to_have_url(f"{live_server.url}/dashboard/sellers/{seller.id}/")
    assert len(dialogs) == 1
    assert "cannot be undone" in dialogs[0]
    # ... and a form forced past it (no JavaScript) lands on the confirmation page
    page.evaluate("document.querySelector('#disconnect-button').form.submit()")
    expect(page.locator("#confirm h1")).to_contain_text("Disconnect Alice's Shop")
    page.click("#confirm-button")
    expect(page.locator(".msg-success")).to_contain_text("Disconnected")
    expect(page.locator("#staff-actions")).to_contain_text("Pull now")
    expect(page.locator("#staff-actions")).to_contain_text("Disconnect")


def test_live_region_refreshes_without_a_reload(
    page: Page, live_server: Any, staff_user: Any
) -> None:
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    page.clock.install()
    page.goto(f"{live_server.url}/dashboard/")
    expect(page.locator("#stat-connections")).to_contain_text("0 sellers")
    SellerFactory(username="zed", display_name="Zed")
    page.clock.run_for(11_000)
    expect(page.locator("#stat-connections")).to_contain_text("1 seller")
    assert page.locator("#overview-live").get_attribute("data-live-updated")
