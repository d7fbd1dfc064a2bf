"""Every date-time the sandbox answers is RFC 3339 with an offset (the interface document's
"Versioning": year-month-day, ``T``, time, offset), in the Authentication, Platform and
order APIs (v1 and v2) alike.

A small flow fills every time-bearing field (login, accounts, databases, an export with a
schedule and a run, an import with a schedule and a run, an order placed, confirmed,
shipped and partly cancelled), then every value of every answer is walked: a string that
looks like a date must be a date-time with an offset. The one exception is the one the
order contract names: v1's shipment ``shipped_date`` is a date.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

import requests

from tests.sandbox.conftest import Api, order_body, refresh
from tests.sandbox.order_source.after_sale_helpers import return_body
from tests.sandbox.orders_v2.test_returns_refunds_v2 import refund_line
from tests.sandbox.orders_v2.v2_client import SellerApi, seller_api
from tests.sandbox.platform_api.test_platform_imports import (
    DELIMITERS,
    STATUS_CSV,
    STATUS_MAPS,
    FileServer,
    file_map_body,
    files,
)
from tests.support.sandbox_process import SandboxProcess

__all__ = ["files"]  # a fixture used below

DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}")
RFC_3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")
PLAIN_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
USERNAME, PASSWORD, EMAIL = "dates-api", "dates-api-pass", "dates@mp.example"
# Sent as the order interface asks (UTC, ``Z``, whole seconds: ``wire_dates``).
WINDOWS = {
    "purchase_date": "2024-04-18T08:15:00Z",
    "earliest_ship_date": "2024-04-19T08:00:00Z",
    "latest_ship_date": "2024-04-20T18:00:00Z",
    "earliest_delivery_date": "2024-04-21T13:00:00Z",
    "latest_delivery_date": "2024-04-23T17:00:00Z",
}


class Answers:
    """Every answer of the flow, by API: ``(api, call, JSON body)``."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, Any]] = []

    def take(self, api: str, response: requests.Response, status: int = 200) -> Any:
        call = f"{response.request.method} {response.request.path_url}"
        assert response.status_code == status, (call, response.status_code, response.text)
        body = response.json()
        self.items.append((api, call, body))
        return body


def _date_like(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _date_like(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from _date_like(item, f"{path}[]")
    elif isinstance(value, str) and DATE_LIKE.search(value):
        yield path, value


def _is_rfc_3339_with_offset(value: str) -> bool:
    if not RFC_3339.fullmatch(value):
        return False
    parsed = datetime.fromisoformat(value)
    return parsed.tzinfo is not None and parsed.utcoffset() is not None


def _platform_flow(sandbox: SandboxProcess, files: FileServer, answers: Answers) -> None:
    db = sandbox.db_create(
        "Dated catalog",
        account_name="Dated Shop",
        rows=[{"id": "A-1", "title": "Mug"}, {"id": "A-3", "title": "Bowl"}],
        fields=["id", "title"],
    )
    sandbox.api_user_create(USERNAME, PASSWORD, EMAIL, account_ids=[str(db["account_id"])])
    base = sandbox.platform_url
    login = {"username": USERNAME, "password": PASSWORD, "method": "token"}
    answers.take("auth", requests.post(base + "/login", json=login, timeout=10))
    code = sandbox.twofa_code(EMAIL)
    second = requests.post(base + "/login", json={**login, "twofa_token": code}, timeout=10)
    token = answers.take("auth", second)["token"]
    http = requests.Session()
    http.headers.update({"x-api-key": token, "Authorization": f"Bearer {token}"})

    def call(method: str, path: str, **kwargs: Any) -> requests.Response:
        return http.request(method, base + path, timeout=10, **kwargs)

    answers.take("auth", call("GET", "/user/accounts"))
    answers.take("auth", call("GET", "/user/list-accounts?page=1&results_per_page=10"))
    dbs = f"/dbs/{db['id']}"

    export = answers.take("platform", call("POST", f"{dbs}/exports", json={"name": "feed"}))
    exports = f"{dbs}/exports/{export['id']}"
    schedule = {"day": "*", "hour": "3", "minute": "5"}
    answers.take("platform", call("PUT", f"{exports}/schedule", json=schedule))
    answers.take("platform", call("POST", f"{exports}/run"), status=202)
    deadline = time.monotonic() + 20
    while call("GET", exports).json()["status"] in ("new", "running"):
        assert time.monotonic() < deadline, "the export run did not finish"
        time.sleep(0.1)
    answers.take("platform", call("GET", exports))
    answers.take("platform", call("GET", f"{dbs}/exports"))

    body = {
        "name": "status",
        "join_type": "join_info",
        "file_name": "s.csv",
        "file_location": "url",
        "url": files.serve("/s.csv", STATUS_CSV),
        "username": "status-reader",
        "password": "status-secret",
        "join_key": "id",
    }
    created = answers.take("platform", call("POST", f"{dbs}/imports", json=body))
    imports = f"{dbs}/imports/{created['id']}"
    answers.take("platform", call("PUT", f"{imports}/delimiters", json=DELIMITERS))
    answers.take("platform", call("PUT", f"{imports}/file_map", json=file_map_body(STATUS_MAPS)))
    answers.take("platform", call("PUT", f"{imports}/schedule", json=schedule))
    run = sandbox.control("POST", f"/imports/{created['id']}/run")
    assert run["status"] == "success", run
    answers.take("platform", call("GET", imports))
    answers.take("platform", call("GET", f"{dbs}/imports"))
    answers.take("platform", call("GET", f"/accounts/{db['account_id']}/dbs"))


def _orders_flow(sandbox: SandboxProcess, alice: Api, seller: SellerApi, answers: Answers) -> None:
    placed = alice.put_order(order_body("DT-1", **WINDOWS))
    answers.take("v1", placed, status=201)
    answers.take("v1", refresh(sandbox, alice.refresh_token))
    sandbox.v2_import("alice")

    (order,) = answers.take("v2", seller.call("GET", "/orders"))["orders"]
    v2 = f"/orders/{order['id']}"
    confirm = seller.call("POST", f"{v2}/confirm", json={"merchant_order_number": "ERP-1"})
    answers.take("v2", confirm)
    red, blue = (line["id"] for line in order["order_lines"])
    answers.take("v2", seller.ship(order["id"], [(red, 3)]), status=201)
    answers.take("v2", seller.cancel(order["id"], [(blue, 1)]), status=201)
    answers.take("v2", seller.call("GET", v2))
    answers.take("v2", seller.call("GET", f"{v2}/fulfillments"))
    answers.take("v2", seller.call("GET", f"{v2}/cancellations"))
    answers.take(
        "v2", seller.call("GET", "/orders", params={"imported_after": "2020-01-01T00:00:00Z"})
    )

    answers.take("v1", alice.call("GET", "/orders/DT-1"))
    answers.take("v1", alice.call("GET", "/orders/DT-1/fulfillments"))
    answers.take("v1", alice.call("GET", "/orders"))
    report = [{"code": "UNKNOWN_CARRIER", "message": "unknown carrier", "mp_line_number": "1"}]
    answers.take("v1", alice.call("POST", "/orders/DT-1/errors", json=report))
    # Returns and refunds (returns-refunds-contract.md): request/respond dates are dates.
    answers.take(
        "v1",
        alice.call("PUT", "/orders/DT-1/returns/R-1", json=return_body(mp_order_number="DT-1")),
    )
    answers.take("v1", alice.call("GET", "/returns"))
    (row,) = answers.take("v2", seller.call("GET", "/returns"))["returns"]
    answers.take("v2", seller.call("GET", f"/returns/{row['id']}"))
    refund = {"refund_lines": [refund_line(red)]}
    answers.take("v2", seller.call("POST", f"{v2}/refunds", json=refund), status=201)
    answers.take("v1", alice.call("GET", "/refunds"))
    answers.take("v1", alice.call("GET", "/orders/DT-1/refunds"))


def test_every_date_time_answered_is_rfc_3339_with_an_offset(
    sandbox: SandboxProcess, alice: Api, files: FileServer
) -> None:
    answers = Answers()
    seller = seller_api(sandbox, "alice")
    answers.take("v2", seller.get_token())

    _platform_flow(sandbox, files, answers)
    _orders_flow(sandbox, alice, seller, answers)

    seen: set[str] = set()
    wrong = []
    for api, call, body in answers.items:
        for path, value in _date_like(body, ""):
            seen.add(f"{api}:{path.replace('[]', '')}")
            if api == "v1" and path.endswith(
                (".shipped_date", ".request_date", ".respond_date", ".date_created")
            ):
                ok = bool(PLAIN_DATE.fullmatch(value)) and bool(date.fromisoformat(value))
            else:
                ok = _is_rfc_3339_with_offset(value)
            if not ok:
                wrong.append((api, call, path, value))
    assert wrong == []
    # The flow really filled the time-bearing fields: the walk saw each of them.
    for field in (
        "platform:.last_download_time",
        "platform:.last_log.time",
        "platform:.next_run_time",
        "v1:.purchase_date",
        "v1:.latest_delivery_date",
        "v1:.fulfillments.shipments.shipped_date",
        "v2:.imported_date",
        "v2:.purchase_date",
        "v2:.earliest_ship_date",
        "v2:.shipment.shipped_date",
        "v2:.orders.imported_date",
        "v1:.request_date",
        "v1:.returns.respond_date",
        "v1:.refunds.date_created",
        "v2:.respond_by_date",
        "v2:.returns.marketplace_state_changed_date",
    ):
        assert field in seen, (field, sorted(seen))


def test_the_check_itself_refuses_what_the_contract_does_not_allow() -> None:
    assert _is_rfc_3339_with_offset("2026-11-24T10:55:00+00:00")
    assert _is_rfc_3339_with_offset("2026-11-24T10:55:00.123Z")
    assert not _is_rfc_3339_with_offset("2026-11-24 10:55:00")
    assert not _is_rfc_3339_with_offset("2026-11-24T10:55:00")
    assert not _is_rfc_3339_with_offset("2026-11-24")
    assert not _is_rfc_3339_with_offset("2026-11-24T10:55+00:00")
    assert list(_date_like({"a": [{"b": "on 2026-11-24"}], "c": 20261124}, "")) == [
        (".a[].b", "on 2026-11-24")
    ]
