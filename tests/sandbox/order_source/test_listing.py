"""GET /orders: every filter, cursor paging and refusal of bad parameters."""

from __future__ import annotations

import pytest

from tests.sandbox.conftest import Api, order_body, wire
from tests.support.sandbox_process import SandboxProcess


def _numbers(response_json: dict) -> list[str]:
    return [order["mp_order_number"] for order in response_json["orders"]]


def _all_pages(api: Api, **params: object) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        response = api.call("GET", "/orders", params=query)
        assert response.status_code == 200, response.text
        pages.append(_numbers(response.json()))
        cursor = response.json()["next_cursor"]
        if cursor is None:
            return pages


def test_cursor_paging_visits_every_order_once(alice: Api) -> None:
    for i in range(45):
        assert alice.put_order(order_body(f"P-{i:03}")).status_code == 201
    pages = _all_pages(alice, page_size=10)
    assert [len(p) for p in pages] == [10, 10, 10, 10, 5]
    seen = [n for page in pages for n in page]
    assert sorted(seen) == [f"P-{i:03}" for i in range(45)]
    assert seen == [f"P-{i:03}" for i in range(45)]  # stable: by (imported_at, id)


def test_default_page_size_is_20(alice: Api) -> None:
    for i in range(21):
        alice.put_order(order_body(f"D-{i}"))
    first = alice.call("GET", "/orders").json()
    assert len(first["orders"]) == 20
    assert first["next_cursor"] is not None


def test_exact_page_has_no_next_cursor(alice: Api) -> None:
    for i in range(10):
        alice.put_order(order_body(f"E-{i}"))
    response = alice.call("GET", "/orders", params={"page_size": 10}).json()
    assert len(response["orders"]) == 10
    assert response["next_cursor"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"page_size": 9}, "page_size"),
        ({"page_size": 51}, "page_size"),
        ({"page_size": "ten"}, "page_size"),
        ({"fulfillment_status": "SHIPPED"}, "fulfillment_status"),
        ({"fulfillment_status": "COMPLETE,"}, "fulfillment_status"),
        ({"imported_after": "yesterday"}, "imported_after"),
        ({"seller_updated_after": "2024-04-18T10:15:00"}, "seller_updated_after"),
        ({"has_errors": "maybe"}, "has_errors"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"mp_order_numbers": "A,,B"}, "mp_order_numbers"),
    ],
)
def test_bad_filter_values_are_400(alice: Api, params: dict, field: str) -> None:
    response = alice.call("GET", "/orders", params=params)
    assert response.status_code == 400
    assert response.json()["error"] == "validation_error"
    assert field in response.json()["fields"]


def test_filter_by_order_numbers(alice: Api) -> None:
    for number in ("N-1", "N-2", "N-3"):
        alice.put_order(order_body(number))
    response = alice.call("GET", "/orders", params={"mp_order_numbers": "N-3,N-1,N-9"})
    assert sorted(_numbers(response.json())) == ["N-1", "N-3"]


def test_filter_by_fulfillment_status(alice: Api, sandbox: SandboxProcess) -> None:
    for number in ("F-1", "F-2", "F-3"):
        alice.put_order(order_body(number))
    sandbox.ship("F-2")
    sandbox.ship("F-3", lines=[{"mp_line_number": "1", "quantity": 1}])

    def listed(status: str) -> list[str]:
        response = alice.call("GET", "/orders", params={"fulfillment_status": status})
        return sorted(_numbers(response.json()))

    assert listed("UNFULFILLED") == ["F-1"]
    assert listed("COMPLETE") == ["F-2"]
    assert listed("PARTIALLY_FULFILLED") == ["F-3"]
    assert listed("UNFULFILLED,COMPLETE") == ["F-1", "F-2"]


def test_filter_imported_after(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("I-1"))
    sandbox.shift_clock(60)
    boundary = wire(sandbox.state()["now"])
    sandbox.shift_clock(1)
    alice.put_order(order_body("I-2"))
    response = alice.call("GET", "/orders", params={"imported_after": boundary})
    assert _numbers(response.json()) == ["I-2"]


def test_filter_seller_updated_after(alice: Api, sandbox: SandboxProcess) -> None:
    for number in ("S-1", "S-2", "S-3"):
        alice.put_order(order_body(number))
    sandbox.ship("S-1")
    sandbox.shift_clock(60)
    boundary = wire(sandbox.state()["now"])
    sandbox.shift_clock(1)
    sandbox.cancel("S-3", reason="out_of_stock")
    response = alice.call("GET", "/orders", params={"seller_updated_after": boundary})
    assert _numbers(response.json()) == ["S-3"]
    assert sandbox.order("S-3")["seller_updated_at"] > boundary
    # an order the seller never touched does not match any seller_updated_after
    early = alice.call("GET", "/orders", params={"seller_updated_after": "2000-01-01T00:00:00Z"})
    assert sorted(_numbers(early.json())) == ["S-1", "S-3"]


def test_filter_has_errors(alice: Api) -> None:
    for number in ("H-1", "H-2"):
        alice.put_order(order_body(number))
    report = [{"code": "INVALID_TRACKING_NUMBER", "message": "bad", "mp_line_number": "1"}]
    assert alice.call("POST", "/orders/H-2/errors", json=report).status_code == 200
    with_errors = alice.call("GET", "/orders", params={"has_errors": "true"}).json()
    without = alice.call("GET", "/orders", params={"has_errors": "false"}).json()
    assert _numbers(with_errors) == ["H-2"]
    assert _numbers(without) == ["H-1"]


def test_filters_combine(alice: Api, sandbox: SandboxProcess) -> None:
    for number in ("C-1", "C-2", "C-3"):
        alice.put_order(order_body(number))
    sandbox.ship("C-1")
    sandbox.ship("C-2")
    response = alice.call(
        "GET",
        "/orders",
        params={"fulfillment_status": "COMPLETE", "mp_order_numbers": "C-2,C-3"},
    )
    assert _numbers(response.json()) == ["C-2"]


def test_seller_update_moves_the_order_to_the_end_of_the_listing(
    alice: Api, sandbox: SandboxProcess
) -> None:
    for number in ("O-1", "O-2"):
        alice.put_order(order_body(number))
    sandbox.ship("O-1")
    assert _numbers(alice.call("GET", "/orders").json()) == ["O-2", "O-1"]
