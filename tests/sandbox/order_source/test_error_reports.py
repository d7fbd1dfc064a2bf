"""POST /orders/{n}/errors: arrays stored and visible, anything else refused."""

from __future__ import annotations

import pytest

from tests.sandbox.conftest import Api, order_body
from tests.support.sandbox_process import SandboxProcess


def test_error_array_is_stored_and_visible(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("ER-1"))
    report = [
        {
            "code": "INVALID_TRACKING_NUMBER",
            "message": "1Z12-BAD is not a UPS tracking number",
            "mp_line_number": "1",
            "debug": [{"tracking_number": "1Z12-BAD"}],
        },
        {"code": "OTHER", "message": "something else"},
    ]
    response = alice.call("POST", "/orders/ER-1/errors", json=report)
    assert response.status_code == 200
    assert response.json() == {}

    inspected = sandbox.order("ER-1")
    assert inspected["has_errors"] is True
    assert [(e["code"], e["mp_line_number"]) for e in inspected["errors"]] == [
        ("INVALID_TRACKING_NUMBER", "1"),
        ("OTHER", None),
    ]
    assert inspected["errors"][0]["debug"] == [{"tracking_number": "1Z12-BAD"}]
    assert inspected["errors"][0]["request_id"] == response.headers["X-Request-Id"]
    state = sandbox.state()
    assert state["errors_received"] == 2
    assert state["orders"]["with_errors"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"code": "OTHER", "message": "not in an array"}, ""),
        ([], ""),
        (["just a string"], "[0]"),
        ([{"code": "TYPO", "message": "x"}], "[0].code"),
        ([{"code": "OTHER"}], "[0].message"),
        ([{"code": "OTHER", "message": "x", "debug": {"not": "a list"}}], "[0].debug"),
    ],
)
def test_invalid_error_reports_are_400(
    alice: Api, sandbox: SandboxProcess, body: object, field: str
) -> None:
    alice.put_order(order_body("ER-2"))
    response = alice.call("POST", "/orders/ER-2/errors", json=body)
    assert response.status_code == 400
    assert field in response.json()["fields"]
    assert sandbox.state()["errors_received"] == 0


def test_errors_for_unknown_order_are_404(alice: Api) -> None:
    response = alice.call("POST", "/orders/NOPE/errors", json=[{"code": "OTHER", "message": "x"}])
    assert response.status_code == 404


def test_a_seller_change_answers_the_open_errors(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("ER-3"))
    sandbox.ship("ER-3", bad="bad_tracking_number", lines=[{"mp_line_number": "1", "quantity": 1}])
    alice.call(
        "POST", "/orders/ER-3/errors", json=[{"code": "INVALID_TRACKING_NUMBER", "message": "x"}]
    )
    assert sandbox.order("ER-3")["has_errors"] is True
    sandbox.ship("ER-3")
    assert sandbox.order("ER-3")["has_errors"] is False
    assert len(sandbox.order("ER-3")["errors"]) == 1  # history is kept
