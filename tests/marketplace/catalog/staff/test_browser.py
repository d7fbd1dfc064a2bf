"""Staff and a seller in a real browser (Playwright + Debian Chromium) against the live
app and the sandbox process: the API user signed in with the e-mailed code, a seller
linked to a database, the feed set up and run, the seller's listings; a wrong code; a
revoked token."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.catalog.models import FeedRun
from sellers.models import Seller
from tests.marketplace.catalog.platform import API_USER, api_sign_in, wait_for

pytestmark = pytest.mark.browser


def sign_in(page: Page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/sellers/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-button")
    page.wait_for_load_state()


def staff_api_sign_in(page: Page, base: str, world: Any, *, code: str | None = None) -> None:
    username, password, email = API_USER
    page.goto(f"{base}/dashboard/catalog/api-access/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#sign-in-button")
    expect(page.locator(".msg-success")).to_contain_text("A code was sent by e-mail")
    page.fill("#id_code", code or world.sandbox.twofa_code(email))
    page.click("#code-button")


def test_staff_set_up_a_sellers_catalog_feed_and_the_seller_sees_the_listings(
    page: Page, live_server: Any, world: Any, seller: Seller, staff_user: Any, eager_tasks: None
) -> None:
    base = live_server.url
    sign_in(page, base, "staff", "staff-pass-123")
    # Staff sign the API user in with the code e-mailed by the platform
    staff_api_sign_in(page, base, world)
    expect(page.locator("#access-state")).to_have_text("Signed in")
    # Link the seller to their platform database
    page.goto(f"{base}/dashboard/sellers/{seller.pk}/")
    page.click("#catalog-link")
    page.select_option("#account-select", world.account_id)
    page.click("#show-databases")
    page.select_option("#database-select", world.db_id)
    page.click("#link-button")
    expect(page.locator(".msg-success")).to_contain_text("now comes from database")
    expect(page.locator("#linked-database")).to_contain_text("Alice products")
    # Set up the feed (defaults) and run it
    page.click("#feed-button")
    expect(page.locator(".msg-success")).to_contain_text("set up at the platform")
    expect(page.locator("#feed-schedule")).to_contain_text("0 2 * * *")
    page.click("#run-feed")
    expect(page.locator(".msg-success")).to_contain_text("running the feed")
    run = wait_for(
        lambda: FeedRun.objects.filter(seller=seller, status__in=["succeeded", "failed"]).first()
    )
    assert run.status == "succeeded", run.error
    page.reload()
    expect(page.locator("#feed-runs .run-status").first).to_have_text("Succeeded")
    expect(page.locator("#listings")).to_contain_text("AL-0001")
    # The seller then sees their listings and where they come from
    page.click("text=Sign out")
    sign_in(page, base, "alice", "alice-pass-123")
    page.click("nav >> text=Catalog")
    expect(page.locator("#feeding-database")).to_have_text("Alice products")
    # (the portal lists each listing as a card: h-portal)
    expect(page.locator("#listings .listing-card")).to_have_count(5)
    page.fill("#listing-search input[name=q]", "Mug 3")
    page.click("#listing-search button")
    expect(page.locator("#listings .listing-card")).to_have_count(1)
    expect(page.locator("#listings")).to_contain_text("AL-0003")


def test_a_wrong_code_shows_an_error(
    page: Page, live_server: Any, world: Any, staff_user: Any
) -> None:
    sign_in(page, live_server.url, "staff", "staff-pass-123")

    staff_api_sign_in(page, live_server.url, world, code="000001")

    expect(page.locator(".msg-error")).to_contain_text("refused the code")
    expect(page.locator("#access-state")).to_have_text("Not signed in")


def test_a_revoked_token_turns_the_access_to_needs_sign_in(
    page: Page, live_server: Any, world: Any, staff_user: Any
) -> None:
    api_sign_in(world, staff_user)
    world.sandbox.api_token_revoke(username=API_USER[0])
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    page.goto(f"{live_server.url}/dashboard/catalog/api-access/")
    expect(page.locator("#access-state")).to_have_text("Signed in")

    page.click("#check-access")

    expect(page.locator("#access-state")).to_have_text("Needs sign-in")
    expect(page.locator("#api-access-banner")).to_be_visible()
    page.goto(f"{live_server.url}/dashboard/")
    expect(page.locator("#api-access-banner")).to_contain_text("needs sign-in")
