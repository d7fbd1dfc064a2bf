"""The intake API reads returns (``GET`` of one, of the order's, and the order's ``GET``
lists them), refuses absurd request dates with 400, and documents every operation."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from tests.marketplace.portal.builders import completed_return, money_order
from tests.marketplace.returns.conftest import shipped_order

pytestmark = pytest.mark.django_db


def _post_return(api: Client, number: str, **overrides: Any) -> Any:
    body = {
        "mp_return_number": "RET-1",
        "reason": "too small",
        "return_lines": [{"mp_line_number": "1", "quantity": 1}],
        **overrides,
    }
    return api.post(
        f"/api/intake/orders/{number}/returns", json.dumps(body), content_type="application/json"
    )


def test_a_return_and_the_orders_returns_are_read_back(api: Client, seller: Any) -> None:
    order = money_order(seller=seller, number="MP-READ")
    completed_return(order, number="RET-DONE", refunded="12.00")

    one = api.get("/api/intake/orders/MP-READ/returns/RET-DONE")
    listed = api.get("/api/intake/orders/MP-READ/returns")
    with_order = api.get("/api/intake/orders/MP-READ")

    assert one.status_code == 200
    assert one.json()["mp_order_number"] == "MP-READ"
    assert one.json()["status"] == "COMPLETED"
    assert Decimal(one.json()["refunded_amount"]) == Decimal("12.00")
    assert one.json()["currency"] == "EUR"
    assert one.json()["return_lines"][0]["mp_line_number"] == "1"
    assert listed.status_code == 200
    assert [r["mp_return_number"] for r in listed.json()] == ["RET-DONE"]
    assert with_order.status_code == 200
    assert [r["mp_return_number"] for r in with_order.json()["returns"]] == ["RET-DONE"]


def test_unknown_returns_and_orders_are_404(api: Client, seller: Any) -> None:
    money_order(seller=seller, number="MP-NONE")
    assert api.get("/api/intake/orders/MP-NONE/returns/RET-X").status_code == 404
    assert api.get("/api/intake/orders/MP-NONE/returns").json() == []
    assert api.get("/api/intake/orders/NOPE/returns").status_code == 404
    assert api.get("/api/intake/orders/NOPE/returns/RET-1").json()["detail"] == "not found"
    assert Client().get("/api/intake/orders/MP-NONE/returns").status_code == 401


@pytest.mark.parametrize("day", ["9999-12-30", "0001-01-01", "1999-12-31", "2099-01-01"])
def test_an_absurd_request_date_is_400_not_500(api: Client, wakes: list[str], day: str) -> None:
    order = shipped_order()
    response = _post_return(api, order.mp_order_number, request_date=day)
    assert response.status_code == 400, response.content
    assert "request_date" in response.json()["fields"]


def test_a_plausible_request_date_is_taken(api: Client, wakes: list[str]) -> None:
    order = shipped_order()
    response = _post_return(api, order.mp_order_number, request_date="2026-01-05")
    assert response.status_code == 201, response.content
    assert response.json()["respond_date"] > "2026-01-05"


def test_every_intake_operation_is_documented() -> None:
    document = json.loads(Client().get("/api/intake/openapi.json").content)
    operations = [
        (method, path, op)
        for path, methods in document["paths"].items()
        for method, op in methods.items()
    ]
    assert ("get", "/api/intake/orders/{mp_order_number}/returns/{mp_return_number}") in {
        (m, p) for m, p, _ in operations
    }
    for method, path, op in operations:
        assert op.get("summary"), (method, path)
        assert len(op.get("description", "")) > 40, (method, path)


def test_the_docs_page_has_a_viewport() -> None:
    page = Client().get("/api/intake/docs").content.decode()
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
