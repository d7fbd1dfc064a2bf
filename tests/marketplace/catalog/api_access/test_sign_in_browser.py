"""The sign-in form in a real browser (issue 21): a double click on "Sign in" sends the
e-mailed code once (the form disables its button; static JS, the CSP allows no inline
script), and staff see "signed in"."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, Request, expect

from tests.marketplace.catalog.platform import API_USER
from tests.marketplace.catalog.staff.test_browser import sign_in

pytestmark = pytest.mark.browser


def test_a_double_click_on_sign_in_sends_the_code_once_and_says_signed_in(
    page: Page, live_server: Any, world: Any, staff_user: Any
) -> None:
    username, password, email = API_USER
    base = live_server.url
    sign_in(page, base, "staff", "staff-pass-123")
    page.goto(f"{base}/dashboard/catalog/api-access/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#sign-in-button")
    expect(page.locator(".msg-success")).to_contain_text("A code was sent by e-mail")
    expect(page.locator("#sign-in")).to_contain_text("After 5 wrong codes")
    page.fill("#id_code", world.sandbox.twofa_code(email))
    # A slow platform: the second click lands while the first submission is in flight
    world.sandbox.set_faults(endpoint="login", kind="latency", latency_ms=700)
    since = world.sandbox.requests_log(limit=1)[-1]["seq"]
    finishes: list[Request] = []
    page.on(
        "request",
        lambda request: (
            finishes.append(request)
            if request.method == "POST" and request.url.endswith("/api-access/finish/")
            else None
        ),
    )

    # Two clicks 150 ms apart (a double click as people make them): the second while the
    # first submission is in flight. In the page, so the test drives no navigation itself.
    page.evaluate(
        """() => {
            const button = document.querySelector("#code-button");
            button.click();
            setTimeout(() => button.click(), 150);
        }"""
    )

    expect(page.locator(".msg-success")).to_contain_text("Signed in")
    expect(page.locator("#access-state")).to_have_text("Signed in")
    expect(page.locator(".msg-error")).to_have_count(0)
    world.sandbox.clear_faults()
    # One submission left the browser (without the script, Chromium sends both clicks)
    assert len(finishes) == 1
    logins = world.sandbox.requests_log(endpoint="login", since_seq=since)
    assert [entry["status"] for entry in logins] == [200]
