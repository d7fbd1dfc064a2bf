"""The seller in a real browser: the home leads with what to fix, disconnect asks first, and
the orders page fits a phone."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from marketplace.orders.models import ValidationProblem
from sellers.models import PlatformConnection, Seller
from tests.marketplace.dashboard.builders import PASSWORD, build_world
from tests.marketplace.dashboard.test_browser import sign_in
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.browser


def test_portal_home_leads_with_the_problems_the_seller_must_fix(
    page: Page, live_server: Any
) -> None:
    # Given a seller with orders whose shipments have open problems
    world = build_world(sellers=2, orders=6)
    seller = world.sellers[0]
    open_orders = sorted(
        {
            p.order.mp_order_number
            for p in ValidationProblem.objects.filter(
                order__seller=seller, resolved_at__isnull=True
            ).select_related("order")
        }
    )
    assert open_orders
    # When they open the portal
    sign_in(page, live_server.url, seller.user.username, PASSWORD)
    page.goto(f"{live_server.url}/sellers/")
    # Then the first card says what to fix, naming each order, before any number
    todo = page.locator("#todo")
    expect(todo).to_contain_text(f"in {len(open_orders)} order")
    expect(page.locator("#todo-problems")).to_contain_text("Tracking number not valid")
    for number in open_orders:
        expect(todo).to_contain_text(number)
    first_card = page.locator("main .card").first
    expect(first_card).to_have_id("todo")
    expect(page.locator("#orders-with-problems")).to_have_text(str(len(open_orders)))
    # And a click leads to the problem on the order's page
    todo.locator("a", has_text=open_orders[0]).first.click()
    expect(page.locator("#problems")).to_be_visible()
    expect(page.locator(".problem").first).to_contain_text("What to do:")


def test_disconnect_asks_for_confirmation_first(
    page: Page, live_server: Any, platform: Platform, seller: Seller
) -> None:
    connection = platform.connect(seller)
    sign_in(page, live_server.url, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/sellers/connection/")
    # Dismissing the question changes nothing
    questions: list[str] = []

    def dismiss(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.click("#disconnect-button")
    expect(page.locator("#connection-state")).to_have_text("Connected")
    assert questions
    assert "Disconnect" in questions[0]
    connection.refresh_from_db()
    assert connection.state == PlatformConnection.State.CONNECTED
    # Without JavaScript's confirm the server asks on a page of its own
    page.evaluate("document.querySelector('#disconnect-button').form.submit()")
    expect(page.locator("#confirm h1")).to_have_text("Disconnect from the platform?")
    connection.refresh_from_db()
    assert connection.state == PlatformConnection.State.CONNECTED
    # Confirming disconnects
    page.click("#confirm-button")
    expect(page.locator("#connection-state")).to_have_text("Disconnected")
    connection.refresh_from_db()
    assert connection.state == PlatformConnection.State.DISCONNECTED


def test_seller_orders_page_fits_a_390px_phone(page: Page, live_server: Any) -> None:
    world = build_world(sellers=1, orders=8)
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, live_server.url, world.sellers[0].user.username, PASSWORD)
    page.goto(f"{live_server.url}/sellers/orders/")
    expect(page.locator("#portal-orders")).to_be_visible()
    # Nothing runs off the side of the page ...
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    # ... every order's number, status and problems can be read without scrolling sideways
    for cell in page.locator("#portal-orders td").all()[:12]:
        box = cell.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 390
    # ... and the top bar takes at most three lines (brand and sign-out, then the links,
    # which wrap rather than run out of sight: "Platform connectio" cut off, issue 31)
    tops = page.evaluate(
        "[...document.querySelectorAll('.topbar .brand, .topbar .nav a, .topbar .account')]"
        ".map(e => Math.round(e.getBoundingClientRect().top / 8))"
    )
    assert len(set(tops)) <= 3, tops
    for link in page.locator(".topbar .nav a").all():
        box = link.bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= 390, link.inner_text()
