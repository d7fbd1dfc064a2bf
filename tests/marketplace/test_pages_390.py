"""Every page of the app, and every page of the sandbox, fits a 390 px wide phone: the
document never scrolls sideways (a wide table may scroll inside its own box).

The app's pages are enumerated from the URLconf, so a new page is covered without touching
this file: a route without arguments is visited as is; a route with arguments takes them
from ``APP_ARGUMENTS`` (a small world of data), and a new one fails here until it is added.
Whatever answers a GET with something other than an HTML page (a POST-only action's 405, a
JSON answer, a CSV file, an HTML fragment for the live updates) is not a page and is left
out; the test names them and checks that the pages it did visit are the expected number.
The sandbox's pages are enumerated the same way, from the sandbox's own URLconf (read by a
process with the sandbox's settings)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from playwright.sync_api import Browser, Page

from marketplace.catalog.models import (
    CatalogSource,
    FeedRun,
    Listing,
    PlatformApiAccess,
    StatusImport,
)
from marketplace.orders.models import OrderSync
from marketplace.performance.refresh import scorecards_refresh
from sellers import vault
from sellers.models import Seller
from tests.marketplace.dashboard.builders import PASSWORD, World, build_world
from tests.marketplace.dashboard.test_browser import sign_in
from tests.support.factories import password_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# A CDN's address: nothing in it where a line may break.
LONG_URL = (
    "https://cdn.images.example.com/products/0A1B2C3D4E5F60718293A4B5C6D7E8F9012345678"
    "/IMG_20240101_123456789_HIGHRES_FRONT_VIEW_WHITE_BACKGROUND.jpg?width=2048&format=jpg"
)
SCREENSHOTS = Path(os.environ.get("PAGES_SCREENSHOTS", "/tmp/pages-390"))

# Pages that are not ours to lay out: Django's admin and the intake API's Swagger UI.
NOT_OURS = ("admin/", "api/")
# GET answers that are not pages: the live-update fragments (HTML, but a part of a page).
FRAGMENTS = {"dashboard:overview_live", "dashboard:seller_live", "dashboard:order_live"}
FRAGMENTS |= {"portal:order_live"}


@dataclass(frozen=True)
class Route:
    route: str
    name: str
    arguments: tuple[str, ...]


def _routes(patterns: list, prefix: str = "", namespace: str = "") -> Iterator[Route]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern), inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield Route(
                prefix + str(pattern.pattern),
                namespace + pattern.name,
                tuple(pattern.pattern.converters),
            )


def _fill(route: str, arguments: dict[str, Any]) -> str:
    path = route
    for key, value in arguments.items():
        start = path.index("<")
        assert key in path[start : path.index(">") + 1], (route, key)
        path = path[:start] + str(value) + path[path.index(">") + 1 :]
    return "/" + path


# --- the app's small world -------------------------------------------------------------------


@dataclass
class AppWorld:
    world: World
    seller: Seller
    listing: Listing
    run: FeedRun
    step_id: int
    problem_id: int
    finding_id: int

    def arguments(self) -> dict[str, Any]:
        """The value of each URL argument a route may take, by the argument's name."""
        return {
            "seller_id": self.seller.pk,
            "order_id": self.world.order_with_everything().pk,
            "listing_id": self.listing.pk,
            "run_id": self.run.pk,
            "step_id": self.step_id,
            "problem_id": self.problem_id,
            "finding_id": self.finding_id,
            "kind": "late",  # the orders behind a performance figure
        }


def _app_world(staff_user: Any) -> AppWorld:
    world = build_world(sellers=3, orders=6, staff_actor=staff_user)
    seller = world.seller_with_orders()
    now = timezone.now()
    # Long values where a page shows them: an error naming an address, a long shop name.
    order = world.order_with_everything()
    OrderSync.objects.filter(order=order).update(
        status=OrderSync.Status.FAILED, last_error="platform said 500 at " + LONG_URL
    )
    Seller.objects.filter(pk=seller.pk).update(
        display_name="Shop W 000 — ceramics, stoneware & porcelain (wholesale)"
    )
    seller.refresh_from_db()
    CatalogSource.objects.create(
        seller=seller,
        account_id="1001",
        account_name="Shop W 000 platform account with a rather long name",
        db_id="2002",
        db_name="Shop W 000 products (the whole catalog, every brand)",
        linked_at=now,
        feed_state=CatalogSource.FeedState.values[-1],
        export_id="3003",
        feed_key="k" * 40,
        feed_username="feed-user-with-a-long-name",
        file_name="products-of-shop-w-000-for-the-marketplace.csv.gz",
        export_fields=[[c, c] for c in ("id", "title", "description", "price", "image_link")],
        cron="0 2 * * *",
        provisioned_at=now,
        platform_status="idle",
        platform_last_log={"message": "Export written: 3 rows to " + LONG_URL},
    )
    StatusImport.objects.create(
        source=CatalogSource.objects.get(seller=seller),
        state=StatusImport.State.ACTIVE,
        import_id="4004",
        status_key="s" * 40,
        username="status-reader-with-a-long-name",
        join_key="id",
        cron="30 3 * * *",
        provisioned_at=now,
        platform_status="success",
        last_download_time=now.isoformat(),
        last_log={"message": "Import done: 3 rows, 3 matched from " + LONG_URL, "error_flag": "0"},
    )
    # The API user once signed in, now asked to sign in again: its status card in full.
    PlatformApiAccess.objects.update_or_create(
        pk=1,
        defaults={
            "state": PlatformApiAccess.State.NEEDS_SIGN_IN,
            "username": "catalog-api-user-with-a-long-name",
            "token_ciphertext": vault.token_encrypt("not-a-real-token"),
            "token_name": "marketplace-development-" + "0123456789abcdef" * 3,
            "signed_in_at": now,
            "signed_in_by": staff_user,
            "needs_sign_in_since": now,
            "last_checked_at": now,
            "last_error": "The platform refused the token at " + LONG_URL,
        },
    )
    # A second seller linked to a database without a feed yet: the feed's set-up form.
    CatalogSource.objects.create(
        seller=world.sellers[1], account_id="1001", db_id="2003", db_name="Shop W 001 products"
    )
    run = FeedRun.objects.create(
        seller=seller,
        status=FeedRun.Status.SUCCEEDED,
        started_at=now,
        finished_at=now,
        duration_ms=420,
        file_path=f"{seller.pk}/products-of-shop-w-000-for-the-marketplace.csv.gz",
        file_bytes=123456,
        rows=3,
        created=2,
        rejected=1,
        rejections=[{"line": 3, "sku": "SKU-" + "9" * 60, "reason": "price: not a number"}],
    )
    listing = Listing.objects.create(
        seller=seller,
        sku="SKU_WITH_A_LONG_CODE_0001_0002_0003_0004",
        title="Stoneware Mug with a long name that goes on and on, dishwasher safe",
        description="A sturdy mug. " * 30,
        brand="Northwind",
        gtin="4006381333931",
        price=Decimal("12.50"),
        quantity=3,
        condition="new",
        product_type="Home > Kitchen > Mugs > Stoneware > Large",
        image_link=LONG_URL,
        link=LONG_URL.replace("img.", "shop."),
        last_run_id=run.pk,
    )
    scorecards_refresh()  # the Performance pages with figures, not "no figures yet"
    return AppWorld(
        world=world,
        seller=seller,
        listing=listing,
        run=run,
        step_id=_after_sale(order),
        problem_id=_record_problem(order),
        finding_id=_finding(order),
    )


def _finding(order: Any) -> int:
    """A reconciliation finding left to staff, with long values in both versions."""
    from marketplace.reconcile.models import Finding, ReconcileRun

    run = ReconcileRun.objects.create(seller=order.seller, trigger="schedule")
    return Finding.objects.create(
        run=run,
        seller=order.seller,
        kind="refund_not_in_ledger",
        object_type="refund",
        object_key=f"{order.mp_order_number}/refund " + "9" * 30,
        ours={"ledger": "0", "note": LONG_URL},
        theirs={"status": "COMPLETE", "merchant_refund_lines": [{"reason": LONG_URL}]},
        action="staff",
        status="open",
        note="the platform shows it complete; our ledger lacks it " + LONG_URL,
    ).pk


def _after_sale(order: Any) -> int:
    """A return waiting for the seller, a refused seller refund, an unpaid ledger entry and
    a failed platform call, with long words where people wrote them."""
    from marketplace.returns.models import (
        PlatformStep,
        RefundLedgerEntry,
        Return,
        ReturnLine,
        SellerRefund,
        SellerRefundLine,
    )

    line = order.lines.first()
    ret = Return.objects.create(
        order=order,
        seller=order.seller,
        mp_return_number="RET-" + "0123456789" * 4,
        reason="Arrived broken, see " + LONG_URL,
        carrier="DHL",
        tracking_number="1234567890" * 3,
        request_date="2020-01-01",
        respond_date="2020-01-15",
        intake_fingerprint="f" * 64,
    )
    ReturnLine.objects.create(
        return_request=ret,
        mp_return_line_number="1",
        order_line=line,
        quantity=1,
        requested_refund_principal=Decimal("12.50"),
        requested_refund_tax=Decimal("1.00"),
    )
    errors = [
        {
            "code": "EXCESS_ITEM_REFUND",
            "message": "line 1: requested refund amount "
            "(100.99) exceeds the line's cost (75.99) " + LONG_URL,
        }
    ]
    refund = SellerRefund.objects.create(
        seller=order.seller,
        order=order,
        refund_id="9" * 30,
        status="PAUSED",
        pause_count=2,
        paused_at=timezone.now(),
        notes="courtesy " + LONG_URL,
        decision="refused",
        decided_at=timezone.now(),
        errors=errors,
    )
    SellerRefundLine.objects.create(
        refund=refund,
        mp_line_number=line.mp_line_number,
        order_line=line,
        currency="EUR",
        item_refund=Decimal("100.99"),
    )
    accepted = SellerRefund.objects.create(
        seller=order.seller,
        order=order,
        refund_id="8" * 30,
        status="CREATED",
        decision="accepted",
        decided_at=timezone.now(),
    )
    RefundLedgerEntry.objects.create(
        order=order,
        order_line=line,
        refund=accepted,
        currency="EUR",
        amount=Decimal("5.00"),
        payment_key=f"refund:{order.mp_order_number}:{accepted.refund_id}:{line.mp_line_number}",
    )
    step = PlatformStep.objects.create(
        kind="complete_refund",
        seller=order.seller,
        refund=accepted,
        status="failed",
        failures=8,
        last_error="platform said 500 at " + LONG_URL,
    )
    return step.pk


def _record_problem(order: Any) -> int:
    """A listed refund that could not be stored, a dead letter, its error long."""
    from marketplace.returns.models import ReturnsRecordProblem

    return ReturnsRecordProblem.objects.create(
        seller=order.seller,
        kind="refund",
        record_key="8" * 40,
        mp_order_number=order.mp_order_number,
        error="UnreadableRecord: item_refund: 1e+300 is out of range " + LONG_URL,
        failures=5,
        first_failed_at=timezone.now(),
        last_failed_at=timezone.now(),
        dead_at=timezone.now(),
    ).pk


def _overflow(page: Page) -> int:
    """How far the document is wider than the window (0: it fits)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - window.innerWidth")  # type: ignore[arg-type]
    )


def _widest(page: Page) -> str:
    """The elements that stick out of the window, to say *what* overflows."""
    return str(
        page.evaluate(
            """() => [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
                .filter(e => !e.closest('.table-wrap, .wide, pre'))
                .slice(0, 5)
                .map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className
                          + ' ' + Math.round(e.getBoundingClientRect().right))"""
        )
    )


def _visit(page: Page, url: str, shot: str) -> tuple[int, str] | None:
    """None when ``url`` is not a page; otherwise the overflow and the culprits."""
    # Asked first with the context's cookies: Chromium refuses to show an empty 405.
    answer = page.request.get(url, max_redirects=0)
    if answer.status == 405 or not answer.headers.get("content-type", "").startswith("text/html"):
        return None
    response = page.goto(url)
    assert response is not None, url
    # 400, 403: the callback's pages for a broken answer or a signed-out person, and the
    # portal's for someone who is not a seller; pages all the same.
    assert response.status in (200, 400, 403), f"{url} answered {response.status}"
    page.wait_for_load_state("load")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{shot}.png"), full_page=True)
    return _overflow(page), _widest(page)


def _check_all(
    page: Page, base: str, routes: list[Route], arguments: dict[str, Any]
) -> tuple[list[str], list[str], list[str]]:
    visited, skipped, too_wide = [], [], []
    for route in routes:
        if route.arguments:
            missing = set(route.arguments) - set(arguments)
            assert not missing, f"{route.route} takes {missing}: add them to the test's world"
            path = _fill(route.route, {key: arguments[key] for key in route.arguments})
        else:
            path = "/" + route.route
        shot = route.name.replace(":", "-") + f"-{page.viewport_size['width']}"  # type: ignore[index]
        result = _visit(page, base + path, shot)
        if result is None:
            skipped.append(route.name)
            continue
        visited.append(route.name)
        overflow, culprits = result
        if overflow > 0:
            too_wide.append(f"{path}: {overflow}px too wide ({culprits})")
    return visited, skipped, too_wide


def _app_routes(namespaces: tuple[str, ...]) -> list[Route]:
    return [
        route
        for route in _routes(get_resolver().url_patterns)
        if not route.route.startswith(NOT_OURS)
        and route.name not in FRAGMENTS
        and route.name.split(":")[0] in namespaces
    ]


def test_every_app_page_fits_a_phone(
    browser: Browser, live_server: Any, staff_user: Any, plain_user: Any
) -> None:
    app = _app_world(staff_user)
    base = live_server.url
    arguments = app.arguments()
    too_wide: list[str] = []
    visited: list[str] = []

    with browser.new_context(viewport=PHONE) as context:
        page = context.new_page()
        # Signed out: the home page, the sign-in page and the platform's answer arriving
        # after the session ended (the rest redirects to sign in).
        signed_out = [
            ("/", "home"),
            ("/sellers/login/", "login"),
            ("/sellers/connection/callback/?code=c&state=s", "callback-signed-out"),
        ]
        for path, shot in signed_out:
            overflow, culprits = _visit(page, base + path, f"anon-{shot}-390") or (0, "")
            visited.append(path)
            if overflow > 0:
                too_wide.append(f"{path} (signed out): {overflow}px too wide ({culprits})")

        sign_in(page, base, "staff", "staff-pass-123")
        staff = _app_routes(("dashboard", "catalog", "privacy", "performance"))
        seen, skipped_staff, wide = _check_all(page, base, staff, arguments)
        visited += seen
        too_wide += wide
        # The same page in another state: a linked database, the feed's set-up form.
        path = f"/dashboard/catalog/sellers/{app.world.sellers[1].pk}/"
        overflow, culprits = _visit(page, base + path, "catalog-seller-setup-390") or (0, "")
        visited.append(path)
        if overflow > 0:
            too_wide.append(f"{path}: {overflow}px too wide ({culprits})")

    with browser.new_context(viewport=PHONE) as context:
        # Signed in without a seller profile: the portal says so.
        page = context.new_page()
        sign_in(page, base, "carol", password_of("carol"))
        overflow, culprits = _visit(page, base + "/sellers/", "not-a-seller-390") or (0, "")
        visited.append("/sellers/ (not a seller)")
        if overflow > 0:
            too_wide.append(f"/sellers/ (not a seller): {overflow}px too wide ({culprits})")

    with browser.new_context(viewport=PHONE) as context:
        page = context.new_page()
        sign_in(page, base, app.seller.user.username, PASSWORD)
        seller_routes = [
            route
            for route in _app_routes(("sellers", "portal", "portal_catalog", "portal_performance"))
            if route.name not in ("sellers:login", "sellers:logout")
        ]
        seen, skipped_seller, wide = _check_all(page, base, seller_routes, arguments)
        visited += seen
        too_wide += wide

    print(f"visited {len(visited)} pages; not pages: {skipped_staff + skipped_seller}")
    assert too_wide == [], "\n".join(too_wide)
    assert len(visited) >= 25, visited
