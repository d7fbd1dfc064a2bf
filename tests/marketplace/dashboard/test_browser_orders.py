"""Staff in a real browser: a long platform answer is readable and marked truncated, and
the orders list filters by state and by open problems."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.orders.models import Order, OrderSync, ValidationProblem
from marketplace.orders.services.push import RESPONSE_EXCERPT_CHARS
from tests.marketplace.dashboard.builders import build_world
from tests.marketplace.dashboard.test_browser import sign_in

pytestmark = pytest.mark.browser


def test_a_long_platform_answer_wraps_in_its_box_and_says_it_was_truncated(
    page: Page, live_server: Any, staff_user: Any
) -> None:
    # Given a shipped order whose stored answer was cut at the excerpt limit
    world = build_world(sellers=1, orders=1)
    order = world.orders[0]
    answer = {
        "status": "SHIPPED",
        "fulfillments": [
            {"mp_line_number": str(i), "tracking_url": "https://carrier.example/" + "x" * 120}
            for i in range(40)
        ],
    }
    excerpt = json.dumps(answer)[:RESPONSE_EXCERPT_CHARS]
    OrderSync.objects.filter(order=order).update(last_response=excerpt)
    # When staff open the order
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    page.goto(f"{live_server.url}/dashboard/orders/{order.id}/")
    # Then the answer says it is cut short, and is laid out one value a line ...
    expect(page.locator("#response-truncated")).to_contain_text("Truncated")
    expect(page.locator("#response-truncated")).to_contain_text(str(RESPONSE_EXCERPT_CHARS))
    response = page.locator("#response")
    expect(response).to_contain_text('"status": "SHIPPED"')
    assert response.inner_text().count("\n") > 40
    # ... inside its box: nothing runs out of it, nor off the page
    widths = response.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert widths[0] <= widths[1]
    assert page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


def test_staff_filter_orders_by_state_and_by_open_problems(
    page: Page, live_server: Any, staff_user: Any
) -> None:
    world = build_world(sellers=2, orders=6)
    cancelled, clean = world.orders[0], world.orders[1]
    Order.objects.filter(pk=cancelled.pk).update(state=Order.State.CANCELLED)
    ValidationProblem.objects.filter(order=clean).delete()
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    page.goto(f"{live_server.url}/dashboard/orders/")
    rows = page.locator("#orders tbody tr")
    expect(rows).to_have_count(6)
    # By state
    page.select_option("#order-filters select[name=state]", "CANCELLED")
    page.click("#order-filters button[type=submit]")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(cancelled.mp_order_number)
    # By open problems (state cleared)
    page.select_option("#order-filters select[name=state]", "")
    page.check("#order-filters input[name=problems]")
    page.click("#order-filters button[type=submit]")
    expect(rows).to_have_count(5)
    expect(page.locator("#orders")).not_to_contain_text(clean.mp_order_number)
    expect(page.locator("#order-filters input[name=problems]")).to_be_checked()
