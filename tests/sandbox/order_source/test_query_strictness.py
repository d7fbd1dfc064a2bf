"""The order interface reads its query strings strictly, and its cursor needs encoding."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.sandbox.conftest import Api, order_body
from tests.support.sandbox_process import SandboxProcess


def _refused(response: object, name: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "validation_error"
    assert name in body["fields"]
    assert name in body["message"]


@pytest.mark.parametrize("name", ["page", "limit", "updated_after", "Cursor"])
def test_unknown_listing_parameter_is_400_naming_it(alice: Api, name: str) -> None:
    _refused(alice.call("GET", "/orders", params={name: "1"}), name)


def test_repeated_listing_parameter_is_400(alice: Api) -> None:
    alice.put_order(order_body("Q-1"))
    response = alice.call("GET", "/orders", params=[("page_size", "10"), ("page_size", "20")])
    _refused(response, "page_size")
    assert alice.call("GET", "/orders", params={"page_size": "10"}).status_code == 200


@pytest.mark.parametrize(
    "path", ["/orders/Q-2", "/orders/Q-2/fulfillments", "/orders/NOPE/fulfillments"]
)
def test_get_endpoints_without_parameters_refuse_any(alice: Api, path: str) -> None:
    alice.put_order(order_body("Q-2"))
    _refused(alice.call("GET", path, params={"fields": "all"}), "fields")


def test_put_and_error_report_refuse_query_parameters(alice: Api) -> None:
    body = order_body("Q-3")
    _refused(alice.call("PUT", "/orders/Q-3", json=body, params={"dry_run": "1"}), "dry_run")
    assert alice.put_order(body).status_code == 201
    report = [{"code": "OTHER", "message": "x"}]
    response = alice.call("POST", "/orders/Q-3/errors", json=report, params={"notify": "no"})
    _refused(response, "notify")


@pytest.mark.parametrize("name", ["imported_after", "seller_updated_after"])
@pytest.mark.parametrize(
    "value",
    [
        "2024-01-01T00:00:00",  # no offset
        "2024-01-01",  # a date
        "2024-01-01T00:00:00 00:00",  # the '+' not URL-encoded
    ],
)
def test_date_times_need_an_offset(alice: Api, name: str, value: str) -> None:
    _refused(alice.call("GET", "/orders", params={name: value}), name)


def test_only_utc_with_z_is_taken_and_any_offset_under_the_lenient_reading(
    alice: Api, sandbox: SandboxProcess
) -> None:
    assert alice.call("GET", "/orders", params={"imported_after": "2024-01-01T00:00:00Z"}).ok
    offset = {"imported_after": "2024-01-01T02:00:00+02:00"}
    _refused(alice.call("GET", "/orders", params=offset), "imported_after")
    sandbox.readings(date_format="B")
    assert alice.call("GET", "/orders", params=offset).status_code == 200


@pytest.mark.parametrize(
    ("name", "value"),
    [("page_size", " 10"), ("page_size", "1_0"), ("page_size", "+10"), ("has_errors", "TRUE")],
)
def test_values_are_read_strictly(alice: Api, name: str, value: str) -> None:
    _refused(alice.call("GET", "/orders", params={name: value}), name)


def test_cursor_needs_url_encoding_and_pages_through_requests_params(alice: Api) -> None:
    for i in range(25):
        alice.put_order(order_body(f"CU-{i:02}"))
    seen, cursors, cursor = [], [], None
    while True:
        params = {"page_size": 10, **({"cursor": cursor} if cursor else {})}
        page = alice.call("GET", "/orders", params=params).json()
        seen += [o["mp_order_number"] for o in page["orders"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
        cursors.append(cursor)
    assert seen == [f"CU-{i:02}" for i in range(25)]
    assert len(cursors) == 2
    for cursor in cursors:
        assert quote(cursor, safe="") != cursor
        assert "+" in cursor  # read raw from a query string, it turns into a space


def test_a_cursor_sent_without_encoding_is_refused(alice: Api) -> None:
    for i in range(11):
        alice.put_order(order_body(f"RAW-{i:02}"))
    cursor = alice.call("GET", "/orders", params={"page_size": 10}).json()["next_cursor"]
    url = f"{alice.sandbox.api_url}/orders?page_size=10&cursor={cursor}"
    raw = alice.http.get(url, headers={"Authorization": f"Bearer {alice.access_token}"})
    _refused(raw, "cursor")
