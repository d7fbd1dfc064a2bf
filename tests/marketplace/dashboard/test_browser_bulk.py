"""Staff in a real browser, on a desktop and on a 390 px phone: 20 failed orders retried
in one action against the sandbox, a filtered CSV export whose rows are the filtered
list, and no staff page wider than the window."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from marketplace.dashboard.models import StaffAction
from marketplace.orders.intake_schema import OrderIn
from marketplace.orders.models import Order, OrderSync
from marketplace.orders.services.intake import order_create
from sellers.models import PlatformConnection, Seller
from tests.marketplace.conftest import order_body
from tests.marketplace.dashboard.builders import build_world
from tests.marketplace.dashboard.test_browser import sign_in
from tests.marketplace.test_pages_390 import (
    DESKTOP,
    PHONE,
    _app_routes,
    _app_world,
    _check_all,
    _visit,
)
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture(params=list(VIEWPORTS))
def staff_page(request: pytest.FixtureRequest, browser: Browser) -> Any:
    with browser.new_context(viewport=VIEWPORTS[request.param], accept_downloads=True) as ctx:
        yield ctx.new_page()


def no_sideways_scroll(page: Page) -> bool:
    return bool(
        page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # type: ignore[arg-type]
    )


def test_staff_retry_twenty_failed_orders_in_one_action(
    staff_page: Page,
    live_server: Any,
    platform: Platform,
    seller: Seller,
    staff_user: Any,
    eager_tasks: None,
    settings: Any,
) -> None:
    # Given 20 orders whose pushes really failed at the platform (an outage)
    settings.PUSH_MAX_FAILURES = 1
    platform.connect(seller)
    platform.sandbox.set_faults(endpoint="put_order", kind="500")
    numbers = [f"MP-OUT-{n:02d}" for n in range(20)]
    for number in numbers:
        order_create(data=OrderIn.model_validate(order_body(number, seller="alice")))
    assert OrderSync.objects.filter(status="failed").count() == 20
    platform.sandbox.clear_faults()  # the outage is over
    page = staff_page
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    # The navigation counts what needs staff
    expect(page.locator("#nav-failed")).to_contain_text("20")
    # When staff list the failed orders, tick them all at once and retry them
    page.goto(f"{live_server.url}/dashboard/orders/?status=failed")
    rows = page.locator("#orders tbody tr")
    expect(rows).to_have_count(20)
    expect(page.locator("#bulk-retry")).to_be_disabled()  # nothing ticked yet
    page.check("#select-all")
    expect(page.locator("[data-selected-count]")).to_have_text("20 selected")
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.click("#bulk-retry")
    # Then one action pushed all 20, with no confirmation (a retry re-sends the order as is)
    expect(page.locator(".msg-success")).to_contain_text("Retried 20 orders: 20 pushed.")
    assert dialogs == []
    assert page.url.endswith("/dashboard/orders/?status=failed")  # back on the same list
    expect(page.locator(".empty")).to_contain_text("No order matches these filters")
    assert OrderSync.objects.filter(status="synced").count() == 20
    for number in numbers:
        assert platform.sandbox.order(number)["marketplace_state"] == "AWAITING_SHIPMENT"
    assert StaffAction.objects.filter(kind="order_retry", actor=staff_user).count() == 20
    expect(page.locator("#nav-failed")).to_have_count(0)
    assert no_sideways_scroll(page)


def test_a_filtered_csv_export_holds_exactly_the_filtered_list(
    staff_page: Page, live_server: Any, staff_user: Any
) -> None:
    # Given 60 orders of 3 sellers (more than two pages), some late
    world = build_world(sellers=3, orders=60, staff_actor=staff_user)
    now = timezone.now()
    for index, order in enumerate(world.orders):
        Order.objects.filter(pk=order.pk).update(
            purchase_date=now - timedelta(hours=index),
            latest_ship_date=now - timedelta(hours=1) if index % 2 else now + timedelta(days=1),
        )
    seller = world.sellers[0]
    page = staff_page
    sign_in(page, live_server.url, "staff", "staff-pass-123")
    # When staff filter by seller and late, sorted by ship-by date
    page.goto(f"{live_server.url}/dashboard/orders/")
    page.fill("#order-filters input[name=seller_name]", seller.display_name)
    page.check("#order-filters input[name=late]")
    page.click("#order-filters button[type=submit]")
    page.click("#orders thead >> text=Ship by")
    shown: list[str] = []
    while True:
        expect(page.locator("#orders")).to_be_visible()
        shown += page.locator("#orders tbody tr td:nth-child(2) a").all_inner_texts()
        late_flags = page.locator("#orders tbody [data-late]")
        expect(late_flags).to_have_count(page.locator("#orders tbody tr").count())
        next_page = page.locator(".pagination a[rel=next]")
        if not next_page.count():
            break
        next_page.click()
    expected = {
        o.mp_order_number for o in Order.objects.filter(seller=seller, latest_ship_date__lt=now)
    }
    assert set(shown) == expected
    assert len(shown) == len(expected) > 0
    # ... and export what they see (from whichever page they are on)
    with page.expect_download() as download:
        page.click("#export-csv")
    text = download.value.path().read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    # Then the file's rows are the list's rows, in the list's order
    assert [row["order"] for row in rows] == shown
    assert {row["late"] for row in rows} == {"yes"}
    assert {row["seller"] for row in rows} == {seller.display_name}
    assert all(row["total"] and row["currency"] == "EUR" for row in rows)
    assert no_sideways_scroll(page)


def test_no_staff_page_scrolls_sideways_on_a_desktop(
    browser: Browser, live_server: Any, staff_user: Any
) -> None:
    """The 390 px check of every page is tests/marketplace/test_pages_390.py; this is the desktop's,
    plus the list pages as staff use them (filters, ticked rows, a bulk confirmation)."""
    app = _app_world(staff_user)
    base = live_server.url
    with browser.new_context(viewport=DESKTOP) as context:
        page = context.new_page()
        sign_in(page, base, "staff", "staff-pass-123")
        visited, _, too_wide = _check_all(
            page, base, _app_routes(("dashboard", "catalog")), app.arguments()
        )
        assert len(visited) >= 10, visited
        assert too_wide == [], "\n".join(too_wide)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_the_lists_in_use_and_a_bulk_confirmation_fit_the_window(
    browser: Browser, live_server: Any, staff_user: Any, viewport: str
) -> None:
    world = build_world(sellers=6, orders=30, staff_actor=staff_user)
    PlatformConnection.objects.filter(seller__in=world.sellers).update(state="connected")
    base = live_server.url
    with browser.new_context(viewport=VIEWPORTS[viewport]) as context:
        page = context.new_page()
        sign_in(page, base, "staff", "staff-pass-123")
        for path in (
            "/dashboard/orders/?late=on&problems=on&placed_from=2020-01-01&sort=-ship_by",
            "/dashboard/sellers/?state=connected&sort=-failures",
        ):
            overflow, culprits = _visit(page, base + path, f"in-use-{viewport}") or (0, "")
            assert overflow <= 0, f"{path}: {overflow}px too wide ({culprits})"
        # Disconnect many asks first, naming how many (no JavaScript dialog: a page)
        page.goto(f"{base}/dashboard/sellers/")
        boxes = page.locator("#sellers tbody input[name=ids]")
        boxes.nth(0).check()
        boxes.nth(1).check()
        boxes.nth(2).check()
        page.click("#bulk-disconnect")
        expect(page.locator("#confirm h1")).to_have_text("Disconnect 3 sellers")
        expect(page.locator("#confirm")).to_contain_text("This cannot be undone")
        assert no_sideways_scroll(page)
        assert PlatformConnection.objects.filter(state="disconnected").count() == 0
        page.click("#confirm-button")
        expect(page.locator(".msg-success")).to_contain_text("Disconnected 3 sellers")
        assert PlatformConnection.objects.filter(state="disconnected").count() == 3
