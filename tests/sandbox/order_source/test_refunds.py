"""Seller refunds on the marketplace-facing interface over real HTTP: the v2 → v1 view,
the lists and their filters, complete and errors, their repeats and the violations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.sandbox.conftest import Api
from tests.sandbox.order_source.after_sale_helpers import seller_refund, shipped_order
from tests.sandbox_process import SandboxProcess

REFUND_KEYS = {
    "feedamp_refund_id", "mp_order_number", "notes", "status", "date_created",
    "merchant_refund_lines", "errors",
}  # fmt: skip
LINE_KEYS = {
    "mp_line_number", "currency", "refund_quantity", "item_refund", "item_tax_refund",
    "shipping_refund", "shipping_tax_refund", "discount_refund", "reason",
}  # fmt: skip


def kinds(sandbox: SandboxProcess) -> dict[str, int]:
    return {k: n for k, n in sandbox.violations()["by_kind"].items() if n}


def _refund(sandbox: SandboxProcess, number: str, **line: object) -> int:
    made = seller_refund(
        sandbox,
        number,
        {
            "mp_line_number": "1",
            "refund_reason": "CUSTOMER_CANCELLED",
            "refund_quantity": 1,
            "item_refund": "12.50",
            "item_tax_refund": 0.83,
            "refund_notes": "buyer changed their mind",
            **line,
        },
    )
    return int(made["feedamp_refund_id"])


def test_the_v1_view_of_a_v2_refund(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RF-1")
    made = seller_refund(
        sandbox,
        "RF-1",
        {
            "mp_line_number": "1",
            "refund_reason": "PRICE_ERROR",
            "refund_quantity": 0,
            "item_refund": 2,
            "shipping_refund": "1.50",
            "discount_refund": 0.5,
            "refund_notes": "price was wrong",
        },
        {"mp_line_number": "2", "refund_reason": "OTHER", "refund_notes": "courtesy"},
        {"mp_line_number": "2", "refund_reason": "OTHER"},
    )
    refund_id = made["feedamp_refund_id"]
    view = alice.call("GET", f"/orders/RF-1/refunds/{refund_id}")
    assert view.status_code == 200
    body = view.json()
    assert set(body) == REFUND_KEYS
    assert body["feedamp_refund_id"] == refund_id
    assert isinstance(refund_id, int)
    assert body["status"] == "CREATED"
    assert body["errors"] == []
    assert body["notes"] == "price was wrong; courtesy"
    assert datetime.fromisoformat(body["date_created"]).utcoffset() is not None
    first = body["merchant_refund_lines"][0]
    assert set(first) == LINE_KEYS
    assert first == {
        "mp_line_number": "1",
        "currency": "EUR",
        "refund_quantity": 0,
        "item_refund": 2,
        "item_tax_refund": 0,
        "shipping_refund": 1.5,
        "shipping_tax_refund": 0,
        "discount_refund": 0.5,
        "reason": "PRICE_ERROR",
    }
    assert [line["mp_line_number"] for line in body["merchant_refund_lines"]] == ["1", "2", "2"]
    listed = alice.call("GET", "/orders/RF-1/refunds").json()
    assert listed == {"refunds": [body], "next_cursor": None}


def test_complete_is_idempotent_and_errors_after_it_are_409(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RF-2")
    refund_id = _refund(sandbox, "RF-2")
    path = f"/orders/RF-2/refunds/{refund_id}"
    assert alice.call("GET", path).status_code == 200
    done = alice.call("POST", path + "/complete", json={})
    assert done.status_code == 200
    assert done.json()["status"] == "COMPLETED"
    assert alice.call("POST", path + "/complete").json() == done.json()
    assert kinds(sandbox) == {}
    late = alice.call("POST", path + "/errors", json=[{"code": "OTHER", "message": "x"}])
    assert late.status_code == 409
    assert kinds(sandbox) == {"complete_and_errors": 1}


def test_errors_refuse_the_refund_a_repeat_changes_nothing_and_complete_is_409(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RF-3")
    refund_id = _refund(sandbox, "RF-3", item_refund="100.99")
    path = f"/orders/RF-3/refunds/{refund_id}"
    report = [
        {
            "code": "EXCESS_ITEM_REFUND",
            "message": "requested refund amount (100.99) exceeds the line's cost (75.99)",
        }
    ]
    assert alice.call("POST", path + "/errors", json=report).status_code == 200
    refused = alice.call("GET", path).json()
    assert refused["status"] == "REFUSED"
    assert refused["errors"] == report
    again = alice.call("POST", path + "/errors", json=report)
    assert again.status_code == 200
    assert again.json() == {}
    assert alice.call("GET", path).json() == refused
    assert kinds(sandbox) == {}
    complete = alice.call("POST", path + "/complete", json={})
    assert complete.status_code == 409
    assert kinds(sandbox) == {"complete_and_errors": 1}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([{"code": "EXCESS_REFUND", "message": "x"}], "[0].code"),
        ([{"code": "OTHER", "message": "x", "mp_line_number": "1"}], "[0].mp_line_number"),
        ([], ""),
        ({"code": "OTHER", "message": "x"}, ""),
    ],
)
def test_bad_refund_errors_are_400(
    alice: Api, sandbox: SandboxProcess, body: object, field: str
) -> None:
    shipped_order(alice, sandbox, "RF-4")
    refund_id = _refund(sandbox, "RF-4")
    response = alice.call("POST", f"/orders/RF-4/refunds/{refund_id}/errors", json=body)
    assert response.status_code == 400
    assert field in response.json()["fields"]


def test_complete_unread_is_counted(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RF-5")
    refund_id = _refund(sandbox, "RF-5")
    assert alice.call("POST", f"/orders/RF-5/refunds/{refund_id}/complete").status_code == 200
    assert kinds(sandbox) == {"complete_unread": 1}


def test_unknown_refunds_and_other_sellers(alice: Api, bob: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RF-6")
    refund_id = _refund(sandbox, "RF-6")
    assert alice.call("GET", "/orders/RF-6/refunds/999999").status_code == 404
    assert alice.call("GET", "/orders/RF-6/refunds/abc").status_code == 404
    assert alice.call("GET", f"/orders/NOPE/refunds/{refund_id}").status_code == 404
    assert bob.call("GET", f"/orders/RF-6/refunds/{refund_id}").status_code == 404
    assert bob.call("GET", "/refunds").json() == {"refunds": [], "next_cursor": None}


def test_listing_filters_cursor_and_updated_after(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RF-7")
    shipped_order(alice, sandbox, "RF-8")
    ids = [_refund(sandbox, "RF-7") for _ in range(11)] + [_refund(sandbox, "RF-8")]
    first = alice.call("GET", "/refunds", params={"page_size": "10"}).json()
    assert len(first["refunds"]) == 10
    rest = alice.call("GET", "/refunds", params={"cursor": first["next_cursor"]}).json()
    assert rest["next_cursor"] is None
    listed = [r["feedamp_refund_id"] for r in first["refunds"] + rest["refunds"]]
    assert sorted(listed) == sorted(ids)
    only = alice.call("GET", "/refunds", params={"mp_order_numbers": "RF-8"}).json()
    assert [r["feedamp_refund_id"] for r in only["refunds"]] == [ids[-1]]
    offset = sandbox.state()["clock_offset_seconds"]
    mark = datetime.now(UTC) + timedelta(seconds=offset + 1)
    sandbox.shift_clock(3)
    assert alice.call("POST", f"/orders/RF-7/refunds/{ids[0]}/complete").status_code == 200
    since = alice.call(
        "GET", "/refunds", params={"updated_after": mark.isoformat(timespec="seconds")}
    ).json()
    assert [r["feedamp_refund_id"] for r in since["refunds"]] == [ids[0]]
    done = alice.call("GET", "/refunds", params={"status": "COMPLETED,REFUSED"}).json()
    assert [r["feedamp_refund_id"] for r in done["refunds"]] == [ids[0]]
    assert alice.call("GET", "/refunds", params={"status": "OPEN"}).status_code == 400
    assert alice.call("GET", "/refunds", params={"page_size": "100"}).status_code == 400
    assert alice.call("GET", "/refunds", params={"order_id": "1"}).status_code == 400


def test_readings_of_notes_and_of_the_complete_answer(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RF-9")
    refund_id = _refund(sandbox, "RF-9", refund_notes=None)
    path = f"/orders/RF-9/refunds/{refund_id}"
    assert alice.call("GET", path).json()["notes"] is None
    sandbox.readings(refund_notes_empty="B", complete_answer="B")
    assert alice.call("GET", path).json()["notes"] == ""
    assert alice.call("POST", path + "/complete", json={}).json() == {}
    sandbox.readings(complete_answer="A")
    assert alice.call("POST", path + "/complete", json={}).json()["status"] == "COMPLETED"


def test_history_of_completed_refunds_is_not_listed_again(
    alice: Api, sandbox: SandboxProcess
) -> None:
    seeded = sandbox.control(
        "POST",
        "/orders/history",
        {"client_id": "mp-test", "seller": "alice", "count": 30, "refund_status": "COMPLETED"},
    )
    assert seeded["created"] == 30
    assert sandbox.state()["refunds"] == {"COMPLETED": 30}
    assert alice.call("GET", "/refunds", params={"status": "CREATED"}).json()["refunds"] == []
    shipped_order(alice, sandbox, "RF-10")
    fresh = _refund(sandbox, "RF-10")
    now = sandbox.state()["now"][:19] + "+00:00"
    recent = alice.call("GET", "/refunds", params={"updated_after": "2000-01-01T00:00:00Z"})
    assert len(recent.json()["refunds"]) == 20
    since = alice.call("GET", "/refunds", params={"status": "CREATED,REFUSED"}).json()
    assert [r["feedamp_refund_id"] for r in since["refunds"]] == [fresh]
    assert alice.call("GET", "/refunds", params={"updated_after": now}).ok
