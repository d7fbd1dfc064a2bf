"""The code form's "Start again" is a visible secondary button, apart from "Sign in"."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.marketplace.catalog.platform import API_USER
from tests.marketplace.catalog.staff.test_browser import sign_in

pytestmark = pytest.mark.browser


def test_start_again_is_a_secondary_button_that_drops_the_pending_sign_in(
    page: Page, live_server: Any, world: Any, staff_user: Any
) -> None:
    username, password, _ = API_USER
    base = live_server.url
    sign_in(page, base, "staff", "staff-pass-123")
    page.goto(f"{base}/dashboard/catalog/api-access/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#sign-in-button")
    again = page.locator("#start-again-button")
    expect(again).to_be_visible()
    style = again.evaluate(
        "b => { const s = getComputedStyle(b);"
        " return [s.backgroundColor, s.color, s.borderTopStyle]; }"
    )
    # white with the accent colour and a border: a button, not faint text
    assert style[0] == "rgb(255, 255, 255)", style
    assert style[1] != "rgb(203, 213, 225)", style  # not the header's pale link colour
    assert style[2] != "none", style
    sign = page.locator("#code-button").bounding_box()
    box = again.bounding_box()
    assert sign is not None
    assert box is not None
    assert box["y"] >= sign["y"] + sign["height"]  # below Sign in, not touching it
    again.click()
    expect(page.locator("#sign-in-button")).to_be_visible()
