"""Shared pieces of the sandbox tests: a clean sandbox per test, a registered marketplace,
two sellers, and valid order bodies. Everything goes over real HTTP."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
import requests

from tests.support.sandbox_process import SandboxProcess

CLIENT_ID = "mp-test"
CLIENT_SECRET = "mp-test-secret"
REDIRECT_URL = "http://127.0.0.1:8000/sellers/platform/callback"

_ORDER: dict[str, Any] = {
    "sales_channel": "EU",
    "customer": {
        "full_name": "Ada Lovelace",
        "email": "ada@example.com",
        "phone": "+44 20 7946 0000",
        "vat": None,
    },
    "purchase_date": "2024-04-18T10:15:00Z",
    "currency": "EUR",
    "shipping_address": {
        "full_name": "Ada Lovelace",
        "address1": "12 Analytical Row",
        "address2": None,
        "address3": None,
        "city": "London",
        "state": None,
        "postal_code": "N1 9GU",
        "country_code": "GBR",
        "country_code_iso2": "GB",
        "address_type": "residential",
        "phone": None,
    },
    "order_lines": [
        {
            "mp_line_number": "1",
            "sku": "SKU-RED",
            "product_name": "Red mug",
            "quantity": 3,
            "unit_price": "12.50",
            "shipping_method": "standard",
            "shipping_price": "4.00",
            "taxes": [{"type": "VAT", "amount": "2.50"}],
            "discounts": [{"name": "spring", "amount": "1.00", "type": "fixed"}],
        },
        {
            "mp_line_number": "2",
            "sku": "SKU-BLUE",
            "product_name": "Blue mug",
            "quantity": 1,
            "unit_price": 9.99,
        },
    ],
    "marketplace_state": "AWAITING_SHIPMENT",
}


def wire(moment: str) -> str:
    """An RFC 3339 text (the sandbox's ``now``) as the order interface takes a date-time:
    UTC, ``Z``, whole seconds (truncated: never later than ``moment``)."""
    return datetime.fromisoformat(moment).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def order_body(number: str, **overrides: Any) -> dict[str, Any]:
    body = copy.deepcopy(_ORDER)
    body["mp_order_number"] = number
    body.update(overrides)
    return body


def csrf_token(html: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match, "no CSRF token on the page"
    return match.group(1)


def hidden_fields(html: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))


@dataclass
class Api:
    """A marketplace's view of the order interface for one seller's access token."""

    sandbox: SandboxProcess
    access_token: str
    refresh_token: str
    http: requests.Session

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.access_token}", **kwargs.pop("headers", {})}
        kwargs.setdefault("timeout", 10)
        return self.http.request(method, self.sandbox.api_url + path, headers=headers, **kwargs)

    def put_order(self, body: dict[str, Any], number: str | None = None) -> requests.Response:
        return self.call("PUT", f"/orders/{number or body['mp_order_number']}", json=body)


def exchange_code(sandbox: SandboxProcess, code: str) -> requests.Response:
    return requests.post(
        sandbox.api_url + "/access_token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
        },
        timeout=10,
    )


def refresh(sandbox: SandboxProcess, refresh_token: str) -> requests.Response:
    return requests.post(
        sandbox.api_url + "/access_token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
        },
        timeout=10,
    )


@pytest.fixture(autouse=True)
def _clean_sandbox(sandbox: SandboxProcess) -> None:
    sandbox.reset()


@pytest.fixture
def accounts(sandbox: SandboxProcess) -> SandboxProcess:
    """A registered marketplace and two sellers, alice and bob."""
    sandbox.register_client(CLIENT_ID, CLIENT_SECRET, REDIRECT_URL, name="Marketplace X")
    sandbox.create_seller("alice", "alice-pw", name="Alice's Shop")
    sandbox.create_seller("bob", "bob-pw")
    return sandbox


def _api_for(sandbox: SandboxProcess, seller: str) -> Iterator[Api]:
    response = exchange_code(sandbox, sandbox.mint_code(CLIENT_ID, seller, REDIRECT_URL))
    assert response.status_code == 200, response.text
    tokens = response.json()
    with requests.Session() as http:
        yield Api(sandbox, tokens["access_token"], tokens["refresh_token"], http)


@pytest.fixture
def alice(accounts: SandboxProcess) -> Iterator[Api]:
    yield from _api_for(accounts, "alice")


@pytest.fixture
def bob(accounts: SandboxProcess) -> Iterator[Api]:
    yield from _api_for(accounts, "bob")
