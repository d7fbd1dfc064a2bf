"""Seller refunds on the marketplace-facing interface over real HTTP: the v2 → v1 view,
the lists and their filters, complete and errors, their repeats and the violations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from tests.sandbox.conftest import Api
from tests.sandbox.order_source.after_sale_helpers import seller_refund, shipped_order
from tests.support.sandbox_process import SandboxError, SandboxProcess

NEW_YORK = ZoneInfo("America/New_York")

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
    # A date (the reference: ISO 8601 DATE), the day in the platform's zone.
    now = datetime.fromisoformat(sandbox.state()["now"]).astimezone(NEW_YORK)
    assert body["date_created"] == now.date().isoformat()
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
    assert done.json()["status"] == "COMPLETE"
    assert alice.call("POST", path + "/complete").json() == done.json()
    assert kinds(sandbox) == {}
    late = alice.call("POST", path + "/errors", json=[{"code": "OTHER", "message": "x"}])
    assert late.status_code == 409
    assert kinds(sandbox) == {"complete_and_errors": 1}


EXCESS = [
    {
        "code": "EXCESS_ITEM_REFUND",
        "message": "requested refund amount (100.99) exceeds the line's cost (43.00)",
    }
]


def test_errors_pause_the_refund_a_repeat_changes_nothing_and_complete_is_409(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RF-3")
    refund_id = _refund(sandbox, "RF-3", item_refund="100.99")
    path = f"/orders/RF-3/refunds/{refund_id}"
    answer = alice.call("POST", path + "/errors", json=EXCESS)
    assert answer.status_code == 200
    assert answer.json() == {}
    paused = alice.call("GET", path).json()
    assert paused["status"] == "PAUSED"
    assert paused["errors"] == EXCESS
    again = alice.call("POST", path + "/errors", json=EXCESS)
    assert again.status_code == 200
    assert again.json() == {}
    assert alice.call("GET", path).json() == paused
    assert sandbox.refunds(seller="alice")[0]["pauses"] == 1
    assert kinds(sandbox) == {}
    complete = alice.call("POST", path + "/complete", json={})
    assert complete.status_code == 409
    assert "PAUSED" in complete.json()["message"]
    assert alice.call("GET", path).json()["status"] == "PAUSED"
    assert kinds(sandbox) == {"complete_and_errors": 1}
    # Another error while paused is added to the active ones; still one pause.
    more = [{"code": "EXCESS_QUANTITY", "message": "line 1: 4 units of 3"}]
    assert alice.call("POST", path + "/errors", json=[*EXCESS, *more]).status_code == 200
    assert alice.call("GET", path).json()["errors"] == [*EXCESS, *more]
    assert sandbox.refunds(seller="alice")[0]["pauses"] == 1


def test_the_seller_fits_a_paused_refund_and_it_comes_back_created(
    alice: Api, sandbox: SandboxProcess
) -> None:
    """Line 1 was paid 3 x 12.50 + 2.50 tax + 4.00 shipping - 1.00 discount = 43.00."""
    shipped_order(alice, sandbox, "RF-11")
    refund_id = _refund(sandbox, "RF-11", item_refund="100.99", item_tax_refund="0.83")
    path = f"/orders/RF-11/refunds/{refund_id}"
    assert alice.call("POST", path + "/errors", json=EXCESS).status_code == 200
    resolved = sandbox.refund_resolve(refund_id, fit=True)
    assert resolved["resolutions"] == 1
    view = alice.call("GET", path).json()
    assert view["status"] == "CREATED"
    assert view["errors"] == []
    line = view["merchant_refund_lines"][0]
    assert (line["item_refund"], line["item_tax_refund"]) == (42.17, 0.83)
    assert kinds(sandbox) == {}
    done = alice.call("POST", path + "/complete", json={})
    assert done.status_code == 200
    assert done.json()["status"] == "COMPLETE"
    assert kinds(sandbox) == {}


def test_a_refund_paused_twice_then_corrected_by_hand(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RF-12")
    refund_id = _refund(sandbox, "RF-12", item_refund="100.99")
    path = f"/orders/RF-12/refunds/{refund_id}"
    assert alice.call("POST", path + "/errors", json=EXCESS).status_code == 200
    still_over = {"mp_line_number": "1", "refund_reason": "PRICE_ERROR", "item_refund": "50"}
    sandbox.refund_resolve(refund_id, refund_lines=[still_over])
    second = alice.call("GET", path).json()
    assert second["status"] == "CREATED"
    assert second["merchant_refund_lines"][0]["item_refund"] == 50
    assert second["merchant_refund_lines"][0]["reason"] == "PRICE_ERROR"
    report = [{"code": "EXCESS_ITEM_REFUND", "message": "line 1: 50.00 over 43.00"}]
    assert alice.call("POST", path + "/errors", json=report).status_code == 200
    paused = alice.call("GET", path).json()
    assert (paused["status"], paused["errors"]) == ("PAUSED", report)
    sandbox.refund_resolve(refund_id, refund_lines=[{**still_over, "item_refund": "40"}])
    final = alice.call("GET", path).json()
    assert (final["status"], final["errors"]) == ("CREATED", [])
    assert final["merchant_refund_lines"][0]["item_refund"] == 40
    record = sandbox.refunds(seller="alice")[0]
    assert (record["pauses"], record["resolutions"]) == (2, 2)
    assert [h["errors"] for h in record["history"]] == [EXCESS, report]
    assert alice.call("POST", path + "/complete", json={}).json()["status"] == "COMPLETE"
    assert kinds(sandbox) == {}


def test_a_refund_never_corrected_stays_paused_and_only_paused_ones_resolve(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RF-13")
    refund_id = _refund(sandbox, "RF-13", item_refund="100.99")
    path = f"/orders/RF-13/refunds/{refund_id}"
    with pytest.raises(SandboxError, match="409"):
        sandbox.refund_resolve(refund_id, fit=True)
    assert alice.call("POST", path + "/errors", json=EXCESS).status_code == 200
    sandbox.shift_clock(600)
    assert alice.call("GET", path).json()["status"] == "PAUSED"
    listed = alice.call("GET", "/refunds", params={"refund_status": "CREATED"}).json()
    assert listed["refunds"] == []
    with pytest.raises(SandboxError, match="400"):
        sandbox.refund_resolve(refund_id)
    with pytest.raises(SandboxError, match="404"):
        sandbox.refund_resolve(999999, fit=True)


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


def test_listing_filters_and_cursor(alice: Api, sandbox: SandboxProcess) -> None:
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
    assert alice.call("POST", f"/orders/RF-7/refunds/{ids[0]}/complete").status_code == 200
    report = [{"code": "OTHER", "message": "x"}]
    assert alice.call("POST", f"/orders/RF-7/refunds/{ids[1]}/errors", json=report).ok
    by = {
        status: [
            r["feedamp_refund_id"]
            for r in alice.call(
                "GET", "/refunds", params={"refund_status": status, "page_size": "50"}
            ).json()["refunds"]
        ]
        for status in ("COMPLETE", "PAUSED", "CREATED", "COMPLETE,PAUSED")
    }
    assert by["COMPLETE"] == [ids[0]]
    assert by["PAUSED"] == [ids[1]]
    assert sorted(by["CREATED"]) == sorted(ids[2:])
    assert sorted(by["COMPLETE,PAUSED"]) == sorted(ids[:2])
    for bad in ({"refund_status": "COMPLETED"}, {"refund_status": "REFUSED"}):
        refused = alice.call("GET", "/refunds", params=bad)
        assert refused.status_code == 400
        assert "refund_status" in refused.json()["fields"]
    for bad in ({"page_size": "100"}, {"page_size": "9"}, {"cursor": "nope"}):
        assert alice.call("GET", "/refunds", params=bad).status_code == 400
    assert kinds(sandbox) == {"after_sale_query": 5}


@pytest.mark.parametrize("name", ["status", "updated_after", "order_id", "limit"])
def test_an_unknown_filter_is_400_naming_it_and_a_violation(
    alice: Api, sandbox: SandboxProcess, name: str
) -> None:
    response = alice.call("GET", "/refunds", params={name: "CREATED", "refund_status": "CREATED"})
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {name}
    assert "unknown query parameter" in response.json()["fields"][name]
    assert name in response.json()["message"]
    assert kinds(sandbox) == {"after_sale_query": 1}
    recent = sandbox.violations()["recent"][0]
    assert recent["seller"] == "alice"
    assert name in recent["detail"]


def _created_at(sandbox: SandboxProcess) -> datetime:
    return datetime.fromisoformat(sandbox.refunds(seller="alice")[0]["created_at"])


def _listed(alice: Api, **params: str) -> list[int]:
    response = alice.call("GET", "/refunds", params=params)
    assert response.status_code == 200, response.text
    return [r["feedamp_refund_id"] for r in response.json()["refunds"]]


def test_created_after_and_before_are_inclusive_and_zone_less_is_new_york(
    alice: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "RF-14")
    refund_id = _refund(sandbox, "RF-14")
    at = _created_at(sandbox).replace(microsecond=0)
    # The refund was created within that second: on or after its start, and on or before
    # its end (a time with a fraction is ISO 8601 too).
    assert _listed(alice, created_after=at.strftime("%Y-%m-%dT%H:%M:%SZ")) == [refund_id]
    end = (at + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert _listed(alice, created_before=end) == [refund_id]
    assert _listed(alice, created_after=end) == []
    before = (at - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert _listed(alice, created_before=before) == []
    # Without a zone: New York time. The same instant written in New York's wall clock
    # finds it; written as if it were UTC it is hours off (4 or 5) and does not.
    local = at.astimezone(NEW_YORK).replace(tzinfo=None)
    assert _listed(alice, created_after=local.isoformat()) == [refund_id]
    utc_wall = at.astimezone(UTC).replace(tzinfo=None)
    assert _listed(alice, created_after=utc_wall.isoformat()) == []
    offset = at.astimezone(timezone(timedelta(hours=2))).isoformat()
    assert _listed(alice, created_after=offset, created_before=offset) == []
    assert _listed(alice, created_after=at.isoformat(), created_before=end) == [refund_id]
    # A date alone: the whole day in New York.
    day = at.astimezone(NEW_YORK).date()
    assert _listed(alice, created_after=day.isoformat()) == [refund_id]
    assert _listed(alice, created_before=day.isoformat()) == [refund_id]
    assert _listed(alice, created_before=(day - timedelta(days=1)).isoformat()) == []
    for bad in ("yesterday", "2024-13-01", "2024-05-10T25:00:00Z", "1715000000"):
        refused = alice.call("GET", "/refunds", params={"created_after": bad})
        assert refused.status_code == 400
        assert "created_after" in refused.json()["fields"]


def test_last_cursor_reading(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RF-15")
    _refund(sandbox, "RF-15")
    assert alice.call("GET", "/refunds").json()["next_cursor"] is None
    sandbox.readings(next_cursor_last="B")
    assert alice.call("GET", "/refunds").json()["next_cursor"] == ""
    assert alice.call("GET", "/returns").json()["next_cursor"] == ""
    assert alice.call("GET", "/orders/RF-15/refunds").json()["next_cursor"] is None


def test_readings_of_notes_and_of_the_complete_answer(alice: Api, sandbox: SandboxProcess) -> None:
    shipped_order(alice, sandbox, "RF-9")
    refund_id = _refund(sandbox, "RF-9", refund_notes=None)
    path = f"/orders/RF-9/refunds/{refund_id}"
    assert alice.call("GET", path).json()["notes"] is None
    sandbox.readings(refund_notes_empty="B", complete_answer="B")
    assert alice.call("GET", path).json()["notes"] == ""
    assert alice.call("POST", path + "/complete", json={}).json() == {}
    sandbox.readings(complete_answer="A")
    assert alice.call("POST", path + "/complete", json={}).json()["status"] == "COMPLETE"


def test_history_of_completed_refunds_is_not_listed_again(
    alice: Api, sandbox: SandboxProcess
) -> None:
    seeded = sandbox.control(
        "POST",
        "/orders/history",
        {"client_id": "mp-test", "seller": "alice", "count": 30, "refund_status": "COMPLETE"},
    )
    assert seeded["created"] == 30
    assert sandbox.state()["refunds"] == {"COMPLETE": 30}
    assert _listed(alice, refund_status="CREATED") == []
    shipped_order(alice, sandbox, "RF-10")
    fresh = _refund(sandbox, "RF-10")
    assert _listed(alice, refund_status="CREATED") == [fresh]
    assert len(_listed(alice, refund_status="COMPLETE", page_size="50")) == 30
    assert kinds(sandbox) == {}


def test_old_errors_resent_on_the_corrected_refund_are_a_violation(
    alice: Api, sandbox: SandboxProcess
) -> None:
    """The race of the issue: an errors call's answer was lost, the seller corrected the
    refund meanwhile, and a blind retry paused the corrected version with the old errors."""
    shipped_order(alice, sandbox, "RF-16")
    refund_id = _refund(sandbox, "RF-16", item_refund="100.99")
    path = f"/orders/RF-16/refunds/{refund_id}"
    assert alice.call("POST", path + "/errors", json=EXCESS).status_code == 200
    sandbox.refund_resolve(refund_id, fit=True)
    retried = alice.call("POST", path + "/errors", json=EXCESS)
    assert retried.status_code == 200
    assert alice.call("GET", path).json()["status"] == "PAUSED"
    assert kinds(sandbox) == {"refund_errors_after_correction": 1}


def test_fit_leaves_room_for_what_was_already_accepted_on_the_line(
    alice: Api, sandbox: SandboxProcess
) -> None:
    """Line 1 was paid 43.00; a completed refund took 30.00 of it, so a paused refund of
    20.00 + 5.00 shipping is fitted to 13.00: the item cut to 8.00, shipping kept; its
    quantity (5, above the line's 3) cut to 3. Line 2 (9.99) is left as it fits."""
    shipped_order(alice, sandbox, "RF-17")
    first = _refund(sandbox, "RF-17", item_refund="30.00", item_tax_refund=0)
    assert alice.call("GET", f"/orders/RF-17/refunds/{first}").ok
    assert alice.call("POST", f"/orders/RF-17/refunds/{first}/complete").status_code == 200
    made = seller_refund(
        sandbox,
        "RF-17",
        {"mp_line_number": "1", "refund_quantity": 5, "item_refund": "20", "shipping_refund": "5"},
        {"mp_line_number": "2", "refund_quantity": 1, "item_refund": "9.99"},
    )
    path = f"/orders/RF-17/refunds/{made['feedamp_refund_id']}"
    assert alice.call("POST", path + "/errors", json=EXCESS).status_code == 200
    sandbox.refund_resolve(made["feedamp_refund_id"], fit=True)
    one, two = alice.call("GET", path).json()["merchant_refund_lines"]
    assert (one["item_refund"], one["shipping_refund"], one["refund_quantity"]) == (8, 5, 3)
    assert (two["item_refund"], two["refund_quantity"]) == (9.99, 1)
