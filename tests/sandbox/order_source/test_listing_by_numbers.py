"""The listings a reconciliation reads, over real HTTP: orders, refunds and returns by
``mp_order_numbers`` (a page of 50), completed refunds and returns, ``imported_after``; and
the two silent points of ``mp_order_numbers`` (how many, unknown ones) under both readings."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.conftest import Api, order_body, wire
from tests.sandbox.order_source.after_sale_helpers import (
    put_return,
    return_body,
    seller_op,
    seller_refund,
    shipped_order,
)
from tests.support.sandbox_process import SandboxProcess


def numbers_of(answer: dict[str, Any], key: str = "orders") -> list[str]:
    return [row["mp_order_number"] for row in answer[key]]


def over_page(sandbox: SandboxProcess) -> int:
    count: int = sandbox.violations()["by_kind"]["order_numbers_over_page"]
    return count


def place(api: Api, count: int, prefix: str) -> list[str]:
    numbers = [f"{prefix}{i:03}" for i in range(count)]
    for number in numbers:
        assert api.put_order(order_body(number)).status_code == 201
    return numbers


def test_orders_by_number_are_exactly_those_with_their_fulfillments(
    alice: Api, bob: Api, sandbox: SandboxProcess
) -> None:
    shipped_order(alice, sandbox, "BN-1")
    assert alice.put_order(order_body("BN-2")).status_code == 201
    assert alice.put_order(order_body("BN-3")).status_code == 201
    assert bob.put_order(order_body("BN-4")).status_code == 201  # another seller's

    response = alice.call(
        "GET", "/orders", params={"mp_order_numbers": "BN-3,BN-1,BN-4", "page_size": 50}
    )

    assert response.status_code == 200, response.text
    answer = response.json()
    assert numbers_of(answer) == ["BN-1", "BN-3"]  # the listing's order, not the query's
    assert answer["next_cursor"] is None
    by_number = {order["mp_order_number"]: order for order in answer["orders"]}
    assert by_number["BN-1"]["status"] == "FULFILLED"
    assert by_number["BN-1"] == alice.call("GET", "/orders/BN-1").json()
    assert [f["status"] for f in by_number["BN-1"]["fulfillments"]] == ["COMPLETE", "COMPLETE"]
    assert by_number["BN-3"]["status"] == "ORDERED"
    assert [(f["status"], f["shipments"]) for f in by_number["BN-3"]["fulfillments"]] == [
        ("PENDING", []),
        ("PENDING", []),
    ]


def test_fifty_numbers_fill_one_page_of_fifty(alice: Api, sandbox: SandboxProcess) -> None:
    numbers = place(alice, 50, "BF-")

    answer = alice.call(
        "GET", "/orders", params={"mp_order_numbers": ",".join(numbers), "page_size": 50}
    ).json()

    assert numbers_of(answer) == numbers
    assert answer["next_cursor"] is None
    assert over_page(sandbox) == 0


def test_more_numbers_than_a_page_count_and_are_refused_under_b(
    alice: Api, sandbox: SandboxProcess
) -> None:
    numbers = place(alice, 51, "BO-")
    query = {"mp_order_numbers": ",".join(numbers), "page_size": 50}

    taken = alice.call("GET", "/orders", params=query)

    assert taken.status_code == 200, taken.text
    assert len(taken.json()["orders"]) == 50
    assert taken.json()["next_cursor"]
    assert over_page(sandbox) == 1

    sandbox.readings(order_numbers_cap="B")
    refused = alice.call("GET", "/orders", params=query)

    assert refused.status_code == 400
    assert "at most 50" in refused.json()["fields"]["mp_order_numbers"]
    assert over_page(sandbox) == 2


def test_more_than_a_hundred_numbers_are_refused_under_a(
    alice: Api, sandbox: SandboxProcess
) -> None:
    query = ",".join(f"NONE-{i}" for i in range(101))
    for path in ("/orders", "/refunds", "/returns"):
        response = alice.call("GET", path, params={"mp_order_numbers": query})
        assert response.status_code == 400, path
        assert "at most 100" in response.json()["fields"]["mp_order_numbers"]
    assert over_page(sandbox) == 3


def test_unknown_numbers_are_absent_under_a_and_refused_under_b(
    alice: Api, bob: Api, sandbox: SandboxProcess
) -> None:
    assert alice.put_order(order_body("BU-1")).status_code == 201
    assert bob.put_order(order_body("BU-2")).status_code == 201
    query = {"mp_order_numbers": "BU-1,BU-2,BU-9"}

    absent = alice.call("GET", "/orders", params=query)

    assert absent.status_code == 200
    assert numbers_of(absent.json()) == ["BU-1"]

    sandbox.readings(unknown_order_numbers="B")
    refused = alice.call("GET", "/orders", params=query)

    assert refused.status_code == 400
    assert refused.json()["fields"] == {"mp_order_numbers": "unknown order numbers: BU-2, BU-9"}
    known = alice.call("GET", "/orders", params={"mp_order_numbers": "BU-1"})
    assert numbers_of(known.json()) == ["BU-1"]


def test_completed_refunds_of_given_orders(alice: Api, sandbox: SandboxProcess) -> None:
    ids = {}
    for number in ("BR-1", "BR-2", "BR-3"):
        shipped_order(alice, sandbox, number)
        made = seller_refund(
            sandbox,
            number,
            {
                "mp_line_number": "1",
                "refund_reason": "OTHER",
                "refund_quantity": 1,
                "item_refund": 1,
            },
        )
        ids[number] = made["feedamp_refund_id"]
    for number in ("BR-1", "BR-2"):
        done = alice.call("POST", f"/orders/{number}/refunds/{ids[number]}/complete", json={})
        assert done.status_code == 200, done.text

    response = alice.call(
        "GET",
        "/refunds",
        params={"refund_status": "COMPLETE", "mp_order_numbers": "BR-2,BR-3", "page_size": 50},
    )

    assert response.status_code == 200, response.text
    refunds = response.json()["refunds"]
    assert [(r["mp_order_number"], r["feedamp_refund_id"]) for r in refunds] == [
        ("BR-2", ids["BR-2"])
    ]
    assert refunds[0]["status"] == "COMPLETE"


def test_completed_returns_are_listed_by_status(alice: Api, sandbox: SandboxProcess) -> None:
    for number in ("BT-1", "BT-2"):
        shipped_order(alice, sandbox, number)
        assert put_return(alice, number, "R-1", return_body()).status_code == 200
        seller_op(sandbox, number, "R-1", "authorize")
        seller_op(sandbox, number, "R-1", "refund")
    assert alice.call("GET", "/orders/BT-1/returns/R-1").status_code == 200  # read, then decide
    done = alice.call("POST", "/orders/BT-1/returns/R-1/complete", json={})
    assert done.status_code == 200, done.text

    completed = alice.call("GET", "/returns", params={"status": "COMPLETED"}).json()
    both = alice.call(
        "GET", "/returns", params={"status": "COMPLETED,REFUNDED", "mp_order_numbers": "BT-1,BT-2"}
    ).json()

    assert numbers_of(completed, "returns") == ["BT-1"]
    assert completed["returns"][0]["status"] == "COMPLETED"
    assert sorted(numbers_of(both, "returns")) == ["BT-1", "BT-2"]


def test_imported_after_finds_the_orders_placed_since(alice: Api, sandbox: SandboxProcess) -> None:
    place(alice, 3, "BI-OLD-")
    sandbox.shift_clock(60)
    since = wire(sandbox.state()["now"])
    newer = place(alice, 2, "BI-NEW-")

    response = alice.call("GET", "/orders", params={"imported_after": since, "page_size": 50})

    assert response.status_code == 200, response.text
    assert numbers_of(response.json()) == newer


@pytest.mark.parametrize("path", ["/refunds", "/returns"])
def test_after_sale_listings_count_more_numbers_than_a_page(
    alice: Api, sandbox: SandboxProcess, path: str
) -> None:
    query = ",".join(f"NONE-{i}" for i in range(60))

    response = alice.call("GET", path, params={"mp_order_numbers": query})

    assert response.status_code == 200, response.text
    assert over_page(sandbox) == 1
