"""The seller's Pull now in a real browser: the button is on the home page's connection
card, a click says the pull is queued, a second one at once says how long to wait."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.sync import pull_now
from tests.marketplace.dashboard.test_browser import sign_in
from tests.support.factories import PlatformConnectionFactory, SellerFactory, password_of

pytestmark = pytest.mark.browser


def test_pull_now_queues_then_asks_to_wait(
    page: Page, live_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued: list[int] = []
    monkeypatch.setattr(pull_now, "task_enqueue", lambda name, seller_id: queued.append(seller_id))
    seller = SellerFactory(username="dora")
    PlatformConnectionFactory(seller=seller)
    sign_in(page, live_server.url, "dora", password_of("dora"))
    page.goto(f"{live_server.url}/sellers/")
    button = page.locator("#connection-summary #pull-now")
    expect(button).to_be_visible()
    button.click()
    expect(page.locator(".msg-success")).to_contain_text("Pull queued")
    assert queued == [seller.id]
    page.locator("#pull-now").click()
    expect(page.locator(".msg-error")).to_contain_text("Try again in")
    assert queued == [seller.id]
