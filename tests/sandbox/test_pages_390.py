"""Every page of the sandbox fits a 390 px wide phone (the document never scrolls sideways;
a wide table scrolls inside its own box), and the v2 seller page fits 1 280 px.

The pages are enumerated from the sandbox's own URLconf (read by a process with the
sandbox's settings): every route under /sandbox/ but its control API, its stylesheet and scripts, so
a new page is covered without touching this file; a route's arguments come from
``arguments`` below (a small world of data), and a new one fails here until it is added.
What answers a GET with no HTML page (a POST-only form target) is left out. The platform's
own sign-in, consent and error pages (/api/v1/authorize) are visited by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.sandbox.conftest import CLIENT_ID, REDIRECT_URL, Api, order_body
from tests.sandbox.order_source.after_sale_helpers import return_body
from tests.sandbox.orders_v2.test_returns_refunds_v2 import refund_line
from tests.sandbox.orders_v2.v2_client import seller_api
from tests.sandbox.platform_api.test_platform_imports import FileServer, mapped_import
from tests.sandbox.platform_client import platform_for
from tests.support.sandbox_process import SandboxProcess

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
SCREENSHOTS = Path(os.environ.get("PAGES_SCREENSHOTS", "/tmp/pages-390"))
LONG_URL = (
    "https://cdn.images.example.com/products/0A1B2C3D4E5F60718293A4B5C6D7E8F9012345678"
    "/IMG_20240101_123456789_HIGHRES_FRONT_VIEW_WHITE_BACKGROUND.jpg?width=2048&format=jpg"
)
# A wide product database: the table was 1 665 px wide.
FIELDS = [
    "id", "title", "description", "brand", "gtin", "price", "sale_price", "quantity",
    "condition", "image_link", "link", "product_type",
]  # fmt: skip
ROWS = [
    {
        "id": f"A-{n}",
        "title": f"Stoneware Mug {n} with a long name, dishwasher safe",
        "description": "A sturdy mug for every day. " * 4,
        "brand": "Northwind",
        "gtin": "4006381333931",
        "price": f"{10 + n}.50",
        "sale_price": "",
        "quantity": str(n),
        "condition": "new",
        "image_link": LONG_URL,
        "link": LONG_URL.replace("cdn.images", "shop"),
        "product_type": "Home > Kitchen > Mugs",
    }
    for n in range(1, 4)
]

_ROUTES = """
import json, django
django.setup()
from django.urls import URLResolver, get_resolver
def walk(patterns, prefix=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from walk(p.url_patterns, prefix + str(p.pattern))
        elif p.name:
            yield [prefix + str(p.pattern), p.name, list(p.pattern.converters)]
print(json.dumps(list(walk(get_resolver().url_patterns))))
"""


def sandbox_page_routes() -> list[tuple[str, str, list[str]]]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "sandbox.settings"}
    out = subprocess.run([sys.executable, "-c", _ROUTES], env=env, capture_output=True, check=True)
    return [
        (route, name, arguments)
        for route, name, arguments in json.loads(out.stdout)
        if route.startswith("sandbox/")
        and not route.startswith("sandbox/api/")
        and not route.endswith((".css", ".js"))
    ]


@pytest.fixture
def files() -> Iterator[FileServer]:
    server = FileServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def arguments(alice: Api, sandbox: SandboxProcess, files: FileServer) -> dict[str, Any]:
    """A v2 seller with an order shipped in part, a wide database whose import ran, and an
    export that ran."""
    assert alice.put_order(order_body("PG-1")).status_code == 201
    seller = seller_api(sandbox, "alice")
    sandbox.v2_import("alice")
    (order,) = seller.orders()
    # Confirmed, a package shipped and a unit cancelled: every column of the pages filled.
    red, blue = (line["id"] for line in order["order_lines"])
    seller.ok("POST", f"/orders/{order['id']}/confirm", json={"merchant_order_number": "ERP-7"})
    assert seller.ship(order["id"], [(red, 2)]).status_code == 201
    assert seller.cancel(order["id"], [(blue, 1)]).status_code == 201
    # A return awaiting the seller and a seller refund the marketplace refused.
    returned = alice.call(
        "PUT",
        "/orders/PG-1/returns/RET-LONG-NUMBER-0001",
        json=return_body(mp_order_number="PG-1"),
    )
    assert returned.status_code == 200, returned.text
    refund = seller.ok(
        "POST",
        f"/orders/{order['id']}/refunds",
        status=201,
        json={"refund_lines": [refund_line(red, refund_notes="a long note " * 8)]},
    )
    report = [{"code": "EXCESS_ITEM_REFUND", "message": "requested refund amount " * 6}]
    assert alice.call("POST", f"/orders/PG-1/refunds/{refund['id']}/errors", json=report).ok
    api = platform_for(sandbox, rows=ROWS, fields=FIELDS)
    export = api.add_export(name="Nightly feed of every product", threshold="0")
    run = sandbox.export_run(export["id"])
    imported = mapped_import(api, files)
    assert sandbox.control("POST", f"/imports/{imported['id']}/run")["status"] == "success"
    return {
        "username": "alice",
        "order_id": order["id"],
        "mp_order_number": "PG-1",  # the by-number page redirects to the order's page
        "package_id": 1,
        "return_id": 1,
        "refund_id": int(refund["id"]),
        "op": "authorize",
        "db_id": api.db_id,
        "export_id": export["id"],
        "run_id": run["id"],
        "import_id": imported["id"],
    }


def _fill(route: str, arguments: dict[str, Any]) -> str:
    path = route
    while "<" in path:
        start, end = path.index("<"), path.index(">")
        name = path[start + 1 : end].split(":")[-1]
        assert name in arguments, f"{route} takes {name}: add it to the test's world"
        path = path[:start] + str(arguments[name]) + path[end + 1 :]
    return "/" + path


def overflow(page: Page) -> int:
    """How far the document is wider than the window (0: it fits)."""
    return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


def culprits(page: Page) -> str:
    return str(
        page.evaluate(
            """() => [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
                .filter(e => !e.closest('.wide, pre'))
                .slice(0, 5)
                .map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className
                          + ' ' + Math.round(e.getBoundingClientRect().right))"""
        )
    )


def _check(page: Page, url: str, shot: str, too_wide: list[str]) -> None:
    page.wait_for_load_state("load")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{shot}.png"), full_page=True)
    if overflow(page) > 0:
        too_wide.append(f"{url}: {overflow(page)}px too wide ({culprits(page)})")


def test_every_sandbox_page_fits_a_phone(
    browser: Browser, sandbox: SandboxProcess, arguments: dict[str, Any]
) -> None:
    base = sandbox.base_url
    too_wide: list[str] = []
    visited: list[str] = []
    not_pages: list[str] = []
    with browser.new_context(viewport=PHONE) as context:
        page = context.new_page()
        for route, name, _ in sandbox_page_routes():
            path = _fill(route, arguments)
            answer = page.request.get(base + path, max_redirects=0)
            if answer.status == 405 or not answer.headers["content-type"].startswith("text/html"):
                not_pages.append(name)
                continue
            response = page.goto(base + path)
            assert response is not None, path
            assert response.status == 200, (path, response.status)
            visited.append(name)
            _check(page, path, f"sandbox-{name}-390", too_wide)

        # The platform's own pages a seller sees: an error, the sign-in, the consent.
        query = {"response_type": "code", "client_id": CLIENT_ID, "state": "s-1"}
        page.goto(f"{base}/api/v1/authorize?{urlencode({**query, 'client_id': 'nobody'})}")
        _check(page, "/api/v1/authorize (error)", "sandbox-authorize_error-390", too_wide)
        page.goto(f"{base}/api/v1/authorize?{urlencode({**query, 'redirect_url': REDIRECT_URL})}")
        _check(page, "/api/v1/authorize (sign-in)", "sandbox-signin-390", too_wide)
        page.fill("#id_username", "alice")
        page.fill("#id_password", "alice-pw")
        page.click("#signin-button")
        # The sign-in posts and loads the consent page: wait for it before measuring
        expect(page.locator("#consent-form")).to_be_visible()
        assert page.locator("#signin-form").count() == 0, "the sign-in did not lead on"
        _check(page, "/api/v1/authorize (consent)", "sandbox-consent-390", too_wide)
        visited += ["authorize (error)", "authorize (sign-in)", "authorize (consent)"]

    print(f"visited {len(visited)} sandbox pages; not pages: {not_pages}")
    assert too_wide == [], "\n".join(too_wide)
    assert {"sandbox_page", "sandbox_v2_page", "sandbox_platform_db"} <= set(visited)


def test_the_v2_seller_page_fits_a_laptop(
    browser: Browser, sandbox: SandboxProcess, arguments: dict[str, Any]
) -> None:
    too_wide: list[str] = []
    with browser.new_context(viewport=DESKTOP) as context:
        page = context.new_page()
        page.goto(f"{sandbox.base_url}/sandbox/v2/sellers/alice/")
        _check(page, "/sandbox/v2/sellers/alice/", "sandbox-v2-seller-1280", too_wide)
    assert too_wide == [], "\n".join(too_wide)


def test_the_database_page_shows_the_imported_columns_first_in_a_box_of_their_own(
    browser: Browser, sandbox: SandboxProcess, arguments: dict[str, Any]
) -> None:
    with browser.new_context(viewport=DESKTOP) as context:
        page = context.new_page()
        page.goto(f"{sandbox.base_url}/sandbox/platform/dbs/{arguments['db_id']}/")
        headers = page.locator("#rows th").all_inner_texts()
        # The marketplace's columns right after the key, shaded; the database's order on ask
        assert headers[:5] == ["id", "mp_price", "mp_rating", "mp_size", "mp_status"]
        assert page.locator("#rows th.mp").count() == 4
        # The link loads a new page: wait for its table, never read the one being left
        page.click("#column-order a")
        expect(page.locator("#rows th")).to_have_text([*FIELDS, *headers[1:5]])
        # The table scrolls inside its box; the page does not
        box = page.locator(".wide")
        assert box.evaluate("e => e.scrollWidth > e.clientWidth")
        assert overflow(page) <= 0
        # Running the import shows its log without a reload
        page.click("#imports button")
        expect(page.locator("#imports .import-log")).to_contain_text("show the rows as imported")
        expect(page.locator("#imports .import-log")).to_contain_text("matched")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "sandbox-db-after-run-1280.png"))
