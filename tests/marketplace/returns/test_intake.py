"""The return intake route: validation, amounts, idempotency, the OpenAPI document."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from marketplace.returns.models import PlatformStep, Return
from tests.marketplace.returns.conftest import shipped_order

pytestmark = pytest.mark.django_db

URL = "/api/intake/orders/{}/returns"


def body(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "mp_return_number": "RET-1",
        "reason": "too small",
        "preauthorized": False,
        "carrier": "DHL",
        "tracking_number": "1234567890",
        "return_lines": [{"mp_line_number": "1", "quantity": 1}],
    }
    data.update(overrides)
    return data


def post(api: Client, number: str, data: dict[str, Any]) -> Any:
    return api.post(URL.format(number), data, content_type="application/json")


def test_a_return_of_shipped_units_is_stored_with_requested_amounts_and_queued(
    api: Client, wakes: list[str]
) -> None:
    order = shipped_order()
    response = post(api, order.mp_order_number, body())
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["status"] == "AWAITING_AUTHORIZATION"
    line = data["return_lines"][0]
    assert (line["mp_line_number"], line["quantity"]) == ("1", 1)
    assert Decimal(line["requested_refund_principal"]) == Decimal("9.70")
    assert Decimal(line["requested_refund_tax"]) == Decimal("0.80")
    step = PlatformStep.objects.get()
    assert (step.kind, step.status) == ("push_return", "pending")
    assert wakes == ["drain"]


def test_the_same_body_again_is_idempotent_and_a_different_one_conflicts(
    api: Client, wakes: list[str]
) -> None:
    order = shipped_order()
    assert post(api, order.mp_order_number, body()).status_code == 201
    again = post(api, order.mp_order_number, body())
    assert again.status_code == 200
    assert Return.objects.count() == 1
    assert PlatformStep.objects.count() == 1
    other = post(api, order.mp_order_number, body(reason="changed my mind"))
    assert other.status_code == 409
    assert "different body" in other.json()["detail"]


def test_more_than_shipped_less_earlier_returns_is_refused_naming_the_line(
    api: Client, wakes: list[str]
) -> None:
    order = shipped_order()  # line 1: 2 shipped
    assert post(api, order.mp_order_number, body()).status_code == 201
    second = post(
        api,
        order.mp_order_number,
        body(mp_return_number="RET-2", return_lines=[{"mp_line_number": "1", "quantity": 2}]),
    )
    assert second.status_code == 400
    assert second.json()["fields"] == {
        "return_lines.0.quantity": ["line 1: 2 returned but only 1 shipped and not yet returned"]
    }


def test_a_rejected_return_takes_nothing(api: Client, wakes: list[str]) -> None:
    order = shipped_order()
    assert (
        post(
            api, order.mp_order_number, body(return_lines=[{"mp_line_number": "1", "quantity": 2}])
        ).status_code
        == 201
    )
    Return.objects.update(status="REJECTED")
    again = post(
        api,
        order.mp_order_number,
        body(mp_return_number="RET-2", return_lines=[{"mp_line_number": "1", "quantity": 2}]),
    )
    assert again.status_code == 201


def test_unshipped_units_cannot_be_returned(api: Client, wakes: list[str]) -> None:
    order = shipped_order()
    order.lines.get().shipments.all().delete()
    response = post(api, order.mp_order_number, body())
    assert response.status_code == 400
    assert "0 shipped" in response.json()["fields"]["return_lines.0.quantity"][0]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"mp_return_number": "../x"}, "mp_return_number"),
        ({"mp_return_number": "a/b"}, "mp_return_number"),
        ({"return_lines": [{"mp_line_number": "1", "quantity": 1.5}]}, "return_lines.0.quantity"),
        ({"return_lines": [{"mp_line_number": "1", "quantity": "1"}]}, "return_lines.0.quantity"),
        ({"return_lines": [{"mp_line_number": "1", "quantity": 0}]}, "return_lines.0.quantity"),
        ({"return_lines": []}, "return_lines"),
        ({"reason": " "}, "reason"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_bodies_are_400_with_the_field(
    api: Client, wakes: list[str], change: dict[str, Any], field: str
) -> None:
    order = shipped_order()
    response = post(api, order.mp_order_number, body(**change))
    assert response.status_code == 400
    assert field in response.json()["fields"]
    assert not Return.objects.exists()


def test_an_unknown_line_or_a_line_named_twice_is_400(api: Client, wakes: list[str]) -> None:
    order = shipped_order()
    unknown = post(
        api, order.mp_order_number, body(return_lines=[{"mp_line_number": "9", "quantity": 1}])
    )
    assert unknown.status_code == 400
    assert "return_lines.0.mp_line_number" in unknown.json()["fields"]
    twice = post(
        api,
        order.mp_order_number,
        body(return_lines=[{"mp_line_number": "1", "quantity": 1}] * 2),
    )
    assert twice.status_code == 400
    assert twice.json()["fields"]["return_lines.1.mp_line_number"] == [
        "line named twice in this return"
    ]


def test_an_unknown_order_is_404(api: Client) -> None:
    assert post(api, "NOPE", body()).status_code == 404


def test_no_key_is_401(db: Any) -> None:
    assert (
        Client().post(URL.format("X"), body(), content_type="application/json").status_code == 401
    )


def test_the_openapi_document_describes_the_route(api: Client) -> None:
    document = api.get("/api/intake/openapi.json").json()
    operation = document["paths"]["/api/intake/orders/{mp_order_number}/returns"]["post"]
    assert "return" in operation["summary"].lower()
    assert {"201", "200", "400", "404", "409"} <= set(operation["responses"])
