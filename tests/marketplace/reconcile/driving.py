"""Driving the app as its workers would, without Celery (push drain, the returns steps'
drain, each seller's pull), and the buyer's and seller's moves of the reconcile tests:
intake through the API, the seller through the sandbox's control calls."""

from __future__ import annotations

import json

from django.test import Client

from marketplace.orders.services.push import orders_push_drain
from marketplace.returns.services.steps import return_steps_drain
from marketplace.sync.pull import seller_pull
from sellers.models import Seller
from tests.marketplace.conftest import order_body
from tests.support.app_fixtures import Platform


def drive(seller: Seller, rounds: int = 3) -> None:
    """What the workers would do: push, send the returns' steps, pull; a few times over
    so that a pull's decisions are sent and the platform's answers read back."""
    for _ in range(rounds):
        orders_push_drain(seconds=10)
        return_steps_drain()
        seller_pull(seller_id=seller.pk)
        orders_push_drain(seconds=10)
        return_steps_drain()


def intake_order(api: Client, number: str, state: str = "AWAITING_SHIPMENT") -> None:
    body = order_body(number, marketplace_state=state)
    response = api.post(
        "/api/intake/orders", data=json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 201, response.content


def intake_return(api: Client, number: str, ret: str, line: str) -> None:
    body = {
        "mp_return_number": ret,
        "reason": "arrived broken",
        "carrier": "DHL",
        "tracking_number": "1234567890",
        "return_lines": [{"mp_line_number": line, "quantity": 1}],
    }
    response = api.post(
        f"/api/intake/orders/{number}/returns",
        data=json.dumps(body),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content


def seller_refunds_line(platform: Platform, number: str, line: str, amount: str) -> str:
    answer = platform.sandbox.control(
        "POST",
        f"/orders/{number}/refunds",
        {
            "refund_lines": [
                {
                    "mp_line_number": line,
                    "refund_reason": "PRICE_ERROR",
                    "refund_quantity": 1,
                    "currency": "EUR",
                    "item_refund": amount,
                    "refund_notes": "price error",
                }
            ]
        },
    )
    return str(answer["feedamp_refund_id"])


def seller_refunds_return(platform: Platform, number: str, ret: str, amount: float) -> None:
    platform.sandbox.control("POST", f"/orders/{number}/returns/{ret}/authorize", {"rma": "R"})
    platform.sandbox.control(
        "POST",
        f"/orders/{number}/returns/{ret}/refund",
        {
            "lines": [
                {
                    "mp_return_line_number": "1",
                    "principal_refund_amount": amount,
                    "shipping_refund_amount": 0,
                }
            ]
        },
    )


def placed_and_shipped(api: Client, seller: Seller, platform: Platform, number: str) -> None:
    """An order placed through intake, pushed, shipped by the seller and pulled back."""
    intake_order(api, number)
    drive(seller, rounds=1)
    platform.sandbox.ship(number)
    drive(seller)
