"""Every page of the app works on a machine without internet and asks nothing of another
host: a real browser whose every request outside localhost is aborted and recorded."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, Response, expect

from tests.marketplace.dashboard.builders import PASSWORD, build_world
from tests.marketplace.dashboard.test_browser import sign_in
from tests.marketplace.offline import cut_off

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_intake_api_docs_render_their_operations_with_the_network_cut_off(
    page: Page, context: BrowserContext, live_server: Any
) -> None:
    offline = cut_off(context, page)
    page.goto(f"{live_server.url}/api/intake/docs")
    # Swagger UI draws one block per operation from the OpenAPI document
    expect(page.locator(".opblock").first).to_be_visible()
    expect(page.locator("#swagger-ui")).to_contain_text("/api/intake/orders")
    assert offline.outside == []
    assert offline.csp_violations == []


def test_no_page_of_the_app_requests_anything_from_another_host(
    page: Page, context: BrowserContext, live_server: Any, staff_user: Any
) -> None:
    world = build_world(sellers=3, orders=9, staff_actor=staff_user)
    order = world.order_with_everything()
    seller = order.seller
    offline = cut_off(context, page)
    missing: list[str] = []

    def note_missing(response: Response) -> None:
        if response.status == 404:
            missing.append(response.url)

    page.on("response", note_missing)
    base = live_server.url

    page.goto(f"{base}/sellers/login/")
    sign_in(page, base, "staff", "staff-pass-123")
    staff_pages = [
        "/dashboard/",
        "/dashboard/sellers/",
        f"/dashboard/sellers/{seller.id}/",
        "/dashboard/orders/?state=AWAITING_SHIPMENT&problems=on",
        f"/dashboard/orders/{order.id}/",
        "/dashboard/returns/",
        "/admin/",
        "/admin/orders/ordersync/",
        "/api/intake/docs",
    ]
    for path in staff_pages:
        response = page.goto(base + path)
        assert response is not None
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")
    page.goto(f"{base}/dashboard/")
    page.click("text=Sign out")

    sign_in(page, base, seller.user.username, PASSWORD)
    seller_pages = [
        "/sellers/",
        "/sellers/orders/",
        "/sellers/orders/?problems=on",
        f"/sellers/orders/{order.id}/",
        "/sellers/orders/returns/",
        "/sellers/connection/",
    ]
    for path in seller_pages:
        response = page.goto(base + path)
        assert response is not None
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")

    assert offline.outside == []
    assert offline.csp_violations == []
    assert missing == []  # not even /favicon.ico
