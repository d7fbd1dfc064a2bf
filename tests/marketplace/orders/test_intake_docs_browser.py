"""The intake API's docs page (Swagger UI, served by the app) shows the realistic example
body, not text made up from the patterns."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.orders.intake_schema import ORDER_EXAMPLE

pytestmark = pytest.mark.browser


def test_the_docs_page_shows_the_example_order(page: Page, live_server: Any) -> None:
    page.goto(f"{live_server.url}/api/intake/docs")
    page.locator("text=Create an order").first.click()
    example = page.locator(".opblock-body .microlight").first
    expect(example).to_contain_text('"mp_order_number": "WEB-100234"')
    assert json.loads(example.inner_text()) == ORDER_EXAMPLE
