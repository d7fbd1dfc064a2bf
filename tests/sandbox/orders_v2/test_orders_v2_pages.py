"""The sandbox's v2 pages: sellers with their API users and settings, a seller's v2
orders, one order with packages and events, and shipping or cancelling by hand."""

from __future__ import annotations

import re

import pytest
import requests

from tests.sandbox.conftest import Api, csrf_token, order_body
from tests.sandbox.orders_v2.v2_client import SellerApi, seller_api
from tests.support.sandbox_process import SandboxProcess


@pytest.fixture
def seller(alice: Api, sandbox: SandboxProcess) -> SellerApi:
    return seller_api(sandbox, "alice")


@pytest.fixture
def browser() -> requests.Session:
    with requests.Session() as session:
        yield session


def test_pages_use_one_local_stylesheet_and_no_other_host(
    sandbox: SandboxProcess, browser: requests.Session
) -> None:
    for path in ("/sandbox/", "/sandbox/v2/"):
        html = browser.get(sandbox.base_url + path, timeout=10).text
        assert '<link rel="stylesheet" href="/sandbox/sandbox.css">' in html
        assert not re.search(r"""(src|href)=["']https?://""", html)
        assert "{'" not in html  # no Python dict text
    css = browser.get(sandbox.base_url + "/sandbox/sandbox.css", timeout=10)
    assert css.status_code == 200
    assert css.headers["Content-Type"].startswith("text/css")


def test_sellers_page_shows_api_users_and_saves_settings(
    seller: SellerApi, sandbox: SandboxProcess, browser: requests.Session
) -> None:
    page = browser.get(sandbox.base_url + "/sandbox/v2/", timeout=10).text
    assert "alice-api" in page
    assert "424242" in page
    assert "1 / 100" in page  # the fixture's token
    form = {
        "csrfmiddlewaretoken": csrf_token(page),
        "workflow": "whole_order",
        "import_interval_seconds": "5",
        "import_pending": "on",
    }
    saved = browser.post(
        sandbox.base_url + "/sandbox/v2/sellers/alice/settings", data=form, timeout=10
    )
    assert "alice: settings saved" in saved.text
    assert sandbox.v2_settings("alice") | {"last_import_at": None} == {
        "seller": "alice",
        "workflow": "whole_order",
        "import_interval_seconds": 5.0,
        "import_pending": True,
        "last_import_at": None,
    }


def test_the_order_page_is_found_by_the_marketplaces_order_number(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, browser: requests.Session
) -> None:
    """Where a marketplace's problem card sends the seller (PLATFORM_SELLER_ORDER_URL)."""
    url = sandbox.base_url + "/sandbox/v2/orders/by-number/PG-BY-NUMBER/"
    missing = browser.get(url, timeout=10, allow_redirects=False)
    assert missing.status_code == 404
    assert "has not reached the seller's order system yet" in missing.text

    assert alice.put_order(order_body("PG-BY-NUMBER")).status_code == 201
    sandbox.v2_import("alice")
    (order,) = seller.orders()
    found = browser.get(url, timeout=10, allow_redirects=False)
    assert found.status_code == 302
    assert found.headers["Location"] == f"/sandbox/v2/orders/{order['id']}/"
    page = browser.get(url, timeout=10)
    assert page.status_code == 200
    assert "PG-BY-NUMBER" in page.text


def test_order_page_ships_a_package_and_cancels_units_by_hand(
    alice: Api, seller: SellerApi, sandbox: SandboxProcess, browser: requests.Session
) -> None:
    assert alice.put_order(order_body("PG-1")).status_code == 201
    sandbox.v2_import("alice")
    (order,) = seller.orders()
    red, blue = (line["id"] for line in order["order_lines"])
    listing = browser.get(sandbox.base_url + "/sandbox/v2/sellers/alice/", timeout=10).text
    assert "PG-1" in listing
    assert f'href="/sandbox/v2/orders/{order["id"]}/"' in listing

    url = f"{sandbox.base_url}/sandbox/v2/orders/{order['id']}/"
    page = browser.get(url, timeout=10).text
    assert 'id="service-status">NEW<' in page
    ship = {
        "csrfmiddlewaretoken": csrf_token(page),
        f"qty-{red}": "2",
        f"qty-{blue}": "0",
        "carrier": "DHL",
        "tracking_number": "1234567890",
    }
    shipped = browser.post(url + "ship", data=ship, timeout=10)
    assert shipped.status_code == 200
    assert "shipped (DHL 1234567890)" in shipped.text
    assert "1234567890" in shipped.text  # in the packages table
    view = alice.call("GET", "/orders/PG-1/fulfillments").json()
    assert view["fulfillments"][0]["shipments"][0]["tracking_number"] == "1234567890"

    too_many = {
        "csrfmiddlewaretoken": csrf_token(shipped.text),
        f"qty-{red}": "2",
        "reason": "out_of_stock",
    }
    refused = browser.post(url + "cancel", data=too_many, timeout=10)
    assert refused.status_code == 400
    assert red in re.search(r'<p class="error" id="error">(.*?)</p>', refused.text).group(1)

    cancel = {
        "csrfmiddlewaretoken": csrf_token(shipped.text),
        f"qty-{red}": "1",
        f"qty-{blue}": "1",
        "reason": "out_of_stock",
    }
    done = browser.post(url + "cancel", data=cancel, timeout=10)
    assert "recorded" in done.text
    assert 'id="service-status">COMPLETE<' in done.text
    events = done.text.split('id="events"')[1]
    for kind in ("new_order", "fulfilled", "cancelled", "released"):
        assert f"<td>{kind}</td>" in events
    assert alice.call("GET", "/orders/PG-1/fulfillments").json()["status"] == "COMPLETE"
