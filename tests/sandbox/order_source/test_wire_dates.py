"""Date-times sent to the order interface: exactly ``YYYY-MM-DDTHH:MM:SSZ`` (reading A of
``date_format``; anything else is refused naming the field and counted), any RFC 3339 and
a zone-less filter read in America/New_York under B (still counted); the listing filters
mean "on or after"; the last page's ``next_cursor`` is null (A) or ``""`` (B)."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.sandbox.conftest import Api, order_body
from tests.support.sandbox_process import SandboxProcess

NEW_YORK = ZoneInfo("America/New_York")


def date_format_count(sandbox: SandboxProcess) -> int:
    return int(sandbox.violations()["by_kind"]["date_format"])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("purchase_date", "2024-04-18T10:15:00+00:00"),
        ("purchase_date", "2024-04-18T10:15:00.123Z"),
        ("purchase_date", "2024-04-18T12:15:00+02:00"),
        ("earliest_ship_date", "2024-04-19T08:00:00"),
        ("latest_delivery_date", "2024-04-23"),
    ],
)
def test_an_order_date_in_another_form_is_refused_and_counted(
    alice: Api, sandbox: SandboxProcess, field: str, value: str
) -> None:
    response = alice.put_order(order_body("W-1", **{field: value}))

    assert response.status_code == 400, response.text
    assert "YYYY-MM-DDTHH:MM:SSZ" in response.json()["fields"][field]
    assert date_format_count(sandbox) == 1
    assert f"{field} sent as" in sandbox.violations()["recent"][0]["detail"]


def test_utc_with_z_is_taken_and_counts_nothing(alice: Api, sandbox: SandboxProcess) -> None:
    body = order_body("W-2", earliest_ship_date="2024-04-19T08:00:00Z")
    assert alice.put_order(body).status_code == 201
    assert alice.call("GET", "/orders", params={"imported_after": "2024-01-01T00:00:00Z"}).ok
    assert date_format_count(sandbox) == 0


def test_the_lenient_reading_takes_any_offset_and_still_counts_it(
    alice: Api, sandbox: SandboxProcess
) -> None:
    sandbox.readings(date_format="B")
    body = order_body("W-3", purchase_date="2024-04-18T12:15:00.5+02:00")

    assert alice.put_order(body).status_code == 201
    assert date_format_count(sandbox) == 1
    # A zone-less time is not RFC 3339: refused even here, outside the listing filters.
    refused = alice.put_order(order_body("W-4", purchase_date="2024-04-18T10:15:00"))
    assert refused.status_code == 400
    assert "purchase_date" in refused.json()["fields"]


def test_listing_filters_mean_on_or_after(alice: Api, sandbox: SandboxProcess) -> None:
    assert alice.put_order(order_body("B-1")).status_code == 201
    sandbox.readings(date_format="B")  # the exact moment has microseconds: RFC 3339 only
    exact = sandbox.order("B-1")["imported_at"]
    later = (datetime.fromisoformat(exact) + timedelta(microseconds=1)).isoformat()

    def listed(value: str) -> list[str]:
        response = alice.call("GET", "/orders", params={"imported_after": value})
        assert response.status_code == 200, response.text
        return [order["mp_order_number"] for order in response.json()["orders"]]

    assert listed(exact) == ["B-1"]
    assert listed(later) == []


def test_a_zone_less_filter_is_read_in_new_york(alice: Api, sandbox: SandboxProcess) -> None:
    assert alice.put_order(order_body("NY-1")).status_code == 201
    sandbox.readings(date_format="B")
    imported = datetime.fromisoformat(sandbox.order("NY-1")["imported_at"])
    second_before = imported - timedelta(seconds=1)
    new_york_text = second_before.astimezone(NEW_YORK).strftime("%Y-%m-%dT%H:%M:%S")
    utc_text = second_before.strftime("%Y-%m-%dT%H:%M:%S")  # read in New York: hours later

    def listed(value: str) -> list[str]:
        response = alice.call("GET", "/orders", params={"imported_after": value})
        assert response.status_code == 200, response.text
        return [order["mp_order_number"] for order in response.json()["orders"]]

    assert listed(new_york_text) == ["NY-1"]
    assert listed(utc_text) == []
    assert date_format_count(sandbox) >= 2


@pytest.mark.parametrize(("reading", "last"), [("A", None), ("B", "")])
def test_the_last_pages_cursor_is_null_or_empty(
    alice: Api, sandbox: SandboxProcess, reading: str, last: str | None
) -> None:
    sandbox.readings(next_cursor_last=reading)
    for i in range(11):
        assert alice.put_order(order_body(f"C-{i:02}")).status_code == 201
    first = alice.call("GET", "/orders", params={"page_size": 10}).json()
    assert len(first["orders"]) == 10
    assert first["next_cursor"]
    second = alice.call(
        "GET", "/orders", params={"page_size": 10, "cursor": first["next_cursor"]}
    ).json()
    assert [o["mp_order_number"] for o in second["orders"]] == ["C-10"]
    assert "next_cursor" in second
    assert second["next_cursor"] == last
