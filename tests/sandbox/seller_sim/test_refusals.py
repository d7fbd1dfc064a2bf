"""The simulated seller's handling of a refusal, without a sandbox: a 400 (someone shipped
by hand between its reading and its call) is read again, not given up; its log carries the
platform's whole message."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from sandbox.seller_sim.behaviour import Behaviour
from sandbox.seller_sim.client import ApiError, OrderApi
from sandbox.seller_sim.seller import REFUSED_ATTEMPTS, Plan, SimulatedSeller

LONG = (
    "over quantity: line 11 (marketplace line 1): 3 ordered, 2 shipped, 0 cancelled, 1 left; "
    "3 more to ship is too many; line 12 (marketplace line 2): 1 ordered, 1 shipped, "
    "0 cancelled, 0 left; 1 more to ship is too many; and a few more words to pass 300 "
    "characters of text so that a cut would show in the middle of a word somewhere here"
)


class FakeApi(OrderApi):
    """Answers from a script: the packages and cancellations already made, and whether
    the next fulfillment POST is refused."""

    def __init__(self) -> None:
        super().__init__("http://127.0.0.1:9", "u", "p", "1")
        self.packages: list[dict[str, Any]] = []
        self.refuse = 0
        self.posted: list[dict[str, Any]] = []

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        if method == "GET" and path.endswith("/fulfillments"):
            return {"fulfillments": self.packages}
        if method == "GET" and path.endswith("/cancellations"):
            return {"cancellations": []}
        if method == "POST" and path.endswith("/fulfillments"):
            if self.refuse:
                self.refuse -= 1
                body = {"error": "validation_error", "message": LONG}
                raise ApiError(400, body, str(body))
            self.posted.append(kwargs["json"])
            return {"id": str(100 + len(self.posted))}
        raise AssertionError((method, path))


def plan() -> Plan:
    order = {
        "id": "7",
        "marketplace_order_number": "MP-7",
        "order_lines": [{"id": "11", "quantity": 3}, {"id": "12", "quantity": 1}],
    }
    return Plan(order=order, due_at=0, packages=1, carrier="UPS")


def test_the_whole_message_is_kept() -> None:
    assert str(ApiError(400, {"message": LONG}, "")) == f"400: {LONG}"
    cut = str(ApiError(502, None, "<html> " + "word " * 100 + "</html>"))
    assert cut.endswith("word …")  # raw text: cut between words, marked


def test_a_refusal_is_read_again_and_only_what_is_left_is_shipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = FakeApi()
    seller = SimulatedSeller("s1", api, Behaviour(), seed=1)
    seller.plans["7"] = the_plan = plan()
    api.refuse = 1
    with caplog.at_level(logging.INFO, logger="seller_sim"):
        seller.ship("7", the_plan)
        assert "7" in seller.plans  # kept: read again later
        assert LONG in caplog.text
        assert "giving up" not in caplog.text
        # Meanwhile a person shipped 2 of line 11 by hand.
        api.packages = [{"id": "50", "fulfillment_lines": [{"line_id": "11", "quantity": 2}]}]
        seller.ship("7", the_plan)
    assert "7" not in seller.plans
    assert "7" in seller.finished
    (posted,) = api.posted
    assert posted["fulfillment_lines"] == [
        {"line_id": "11", "quantity": 1},
        {"line_id": "12", "quantity": 1},
    ]


def test_a_refusal_every_time_is_given_up_in_the_end(caplog: pytest.LogCaptureFixture) -> None:
    api = FakeApi()
    seller = SimulatedSeller("s1", api, Behaviour(), seed=1)
    seller.plans["7"] = the_plan = plan()
    api.refuse = REFUSED_ATTEMPTS
    with caplog.at_level(logging.INFO, logger="seller_sim"):
        for _ in range(REFUSED_ATTEMPTS):
            seller.ship("7", the_plan)
    assert "7" in seller.finished
    assert f"refused {REFUSED_ATTEMPTS} times" in caplog.text
    assert api.posted == []
