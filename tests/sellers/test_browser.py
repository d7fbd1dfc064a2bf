"""A real Chromium drives the seller's connect flow: the app on live_server, the platform
sandbox as its own process, the seller signing in and approving at the sandbox."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import Page, expect

from sellers.models import PlatformConnection, Seller
from tests.support.app_fixtures import (
    CALLBACK_PATH,
    PLATFORM_SELLER,
    PLATFORM_SELLER_PASSWORD,
    Platform,
)

pytestmark = pytest.mark.browser


@pytest.fixture
def platform_redirect_url(live_server) -> str:
    # The live server's address differs from http://testserver: register its callback.
    return live_server.url + CALLBACK_PATH


def sign_in(page: Page, live_server, seller: Seller, *, via_form: bool) -> None:
    if via_form:
        page.goto(live_server.url + "/sellers/login/")
        page.fill("#id_username", "alice")
        page.fill("#id_password", "alice-pass-123")
        page.click("#login-button")
        expect(page.locator(".who")).to_have_text("alice")
        return
    # Faster for tests about the callback: a session cookie made by Django's test client.
    client = Client()
    client.force_login(seller.user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": live_server.url}])


def sign_in_and_press_connect(
    page: Page, live_server, seller: Seller, *, via_form: bool = False
) -> None:
    sign_in(page, live_server, seller, via_form=via_form)
    page.goto(live_server.url + "/sellers/connection/")
    expect(page.locator("#connection-state")).to_have_text("Not connected")
    page.click("#connect-button")
    # At the platform: sign in.
    page.fill("#id_username", PLATFORM_SELLER)
    page.fill("#id_password", PLATFORM_SELLER_PASSWORD)
    page.click("#signin-button")


def test_seller_connects_through_the_platform_and_sees_connected(
    page: Page, live_server, seller: Seller, platform: Platform
) -> None:
    callbacks: list[str] = []
    page.on("request", lambda r: callbacks.append(r.url) if CALLBACK_PATH in r.url else None)

    sign_in_and_press_connect(page, live_server, seller, via_form=True)
    page.click("#approve-button")

    expect(page).to_have_url(live_server.url + "/sellers/connection/")
    expect(page.locator("#connection-state")).to_have_text("Connected")
    expect(page.locator(".msg-success")).to_have_text("Connected to the platform.")
    connection = PlatformConnection.objects.get(seller=seller)
    assert connection.is_live

    # Replaying the very same callback (same code, same state) is refused.
    assert len(callbacks) == 1
    response = page.goto(callbacks[0])
    assert response.status == 400
    expect(page.locator("#callback-refused")).to_be_visible()
    expect(page.get_by_text("already used")).to_be_visible()
    assert PlatformConnection.objects.get(seller=seller).generation == connection.generation


def test_seller_denies_at_the_platform_and_gets_a_retry_link(
    page: Page, live_server, seller: Seller, platform: Platform
) -> None:
    sign_in_and_press_connect(page, live_server, seller)
    page.click("#deny-button")

    expect(page.locator("#callback-denied")).to_be_visible()
    expect(page.locator("#retry-button")).to_be_visible()
    assert not PlatformConnection.objects.filter(seller=seller).exists()

    # Retry goes straight back to the platform's consent page (still signed in there).
    page.click("#retry-button")
    expect(page.locator("#approve-button")).to_be_visible()
    page.click("#approve-button")
    expect(page.locator("#connection-state")).to_have_text("Connected")


def test_tampered_callback_is_refused(
    page: Page, live_server, seller: Seller, platform: Platform
) -> None:
    sign_in_and_press_connect(page, live_server, seller)
    # Instead of approving, an attacker-made callback arrives with a forged state.
    code = platform.mint_code()
    response = page.goto(f"{live_server.url}{CALLBACK_PATH}?code={code}&state=forged")

    assert response.status == 400
    expect(page.locator("#callback-refused")).to_be_visible()
    expect(page.get_by_text(re.compile("Nothing was stored"))).to_be_visible()
    assert not PlatformConnection.objects.filter(seller=seller).exists()
