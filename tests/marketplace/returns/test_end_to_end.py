"""End to end over real HTTP: the sandbox (its own process), the marketplace's Celery
worker, and the seller moving returns and posting refunds through the sandbox's control
API (the seller "by hand", as its pages allow). A return created through intake is
pushed (``mp_order_number`` in its body), authorized, refunded, read back, checked,
written to the ledger and completed; a return the seller refuses stays awaiting
authorization and is listed overdue (reading A: the reference's four states) or shows
``REJECTED`` (reading B); a seller refund within the line's cost is paid and completed,
one above it paused with EXCESS_ITEM_REFUND and nothing paid; no violation, under each
return reading.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from marketplace.orders.models import Order, OrderSync
from marketplace.returns.models import RefundLedgerEntry, Return, SellerRefund
from marketplace.returns.selectors import overdue_returns
from marketplace.sync.fan_out import sellers_after_sale_pull_fan_out, sellers_pull_fan_out
from tests.marketplace.conftest import order_body, wait_for
from tests.support.app_fixtures import Platform, page_text
from tests.support.sandbox_process import SandboxError

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def no_violations(platform: Platform) -> Iterator[None]:
    yield
    violations = platform.sandbox.violations()
    assert violations["total"] == 0, violations


def _shipped(number: str) -> bool:
    sellers_pull_fan_out()
    order = Order.objects.filter(mp_order_number=number).select_related("sync").first()
    return bool(order and order.state == "SHIPPED" and order.sync.status == OrderSync.Status.SYNCED)


def _return_body(number: str, line: str, quantity: int = 1, **extra: Any) -> str:
    return json.dumps(
        {
            "mp_return_number": number,
            "reason": "arrived broken",
            "carrier": "DHL",
            "tracking_number": "1234567890",
            "return_lines": [{"mp_line_number": line, "quantity": quantity}],
            **extra,
        }
    )


def _platform_return(platform: Platform, number: str, ret: str) -> dict[str, Any] | None:
    rows = platform.sandbox.control("GET", "/returns")["returns"]
    return next(
        (r for r in rows if r["mp_order_number"] == number and r["mp_return_number"] == ret),
        None,
    )


def _pulled(predicate: Any) -> Any:
    sellers_after_sale_pull_fan_out()
    return predicate()


@pytest.mark.parametrize(
    "readings",
    [{}, {"return_refusal": "B"}, {"return_order_number": "B"}],
    ids=["reading-A", "rejected-B", "order-number-B"],
)
def test_returns_and_seller_refunds_end_to_end(
    platform: Platform,
    connected_seller: Any,
    api: Client,
    worker: Any,
    staff_client: Client,
    readings: dict[str, str],
) -> None:
    sandbox = platform.sandbox
    if readings:
        sandbox.readings(**readings)
    rejected_state = readings.get("return_refusal") == "B"
    number = "MP-RET-1"
    # An order placed, pushed, shipped by the seller and pulled back (paid: line 1 43.00,
    # line 2 9.99).
    response = api.post(
        "/api/intake/orders", data=json.dumps(order_body(number)), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    wait_for(
        lambda: OrderSync.objects.filter(order__mp_order_number=number, pushed_version=1).exists(),
        what="order pushed",
    )
    sandbox.ship(number)
    wait_for(lambda: _shipped(number), timeout=30, what="order shipped and synced")

    # A return through intake reaches the platform (pushed by the worker's outbox).
    url = f"/api/intake/orders/{number}/returns"
    # RET-B was asked for 20 days ago: past RETURN_AUTHORIZATION_DAYS if never authorized.
    asked = (timezone.localdate() - timedelta(days=20)).isoformat()
    for ret, line, extra in (("RET-A", "1", {}), ("RET-B", "2", {"request_date": asked})):
        body = _return_body(ret, line, **extra)
        created = api.post(url, data=body, content_type="application/json")
        assert created.status_code == 201, created.content
    wait_for(lambda: _platform_return(platform, number, "RET-A"), what="RET-A at the platform")
    wait_for(lambda: _platform_return(platform, number, "RET-B"), what="RET-B at the platform")

    # The seller authorizes and refunds RET-A, rejects RET-B, and refunds two lines on its
    # own: line 1 within its cost, line 2 above it.
    sandbox.control("POST", f"/orders/{number}/returns/RET-A/authorize", {"rma": "RMA-1"})
    sandbox.control(
        "POST",
        f"/orders/{number}/returns/RET-A/refund",
        {
            "lines": [
                {
                    "mp_return_line_number": "1",
                    "principal_refund_amount": 13.33,
                    "shipping_refund_amount": 1.5,
                }
            ]
        },
    )
    # The seller refuses RET-B: a state only under reading B (A has no such operation).
    try:
        sandbox.control("POST", f"/orders/{number}/returns/RET-B/reject", {"reason": "used"})
        refused_by_seller = True
    except SandboxError:
        refused_by_seller = False
    assert refused_by_seller == rejected_state
    within = sandbox.control(
        "POST",
        f"/orders/{number}/refunds",
        {
            "refund_lines": [
                {
                    "mp_line_number": "1",
                    "refund_reason": "PRICE_ERROR",
                    "refund_quantity": 1,
                    "currency": "EUR",
                    "item_refund": "12.50",
                    "item_tax_refund": "0.83",
                    "refund_notes": "price error",
                }
            ]
        },
    )
    above = sandbox.control(
        "POST",
        f"/orders/{number}/refunds",
        {
            "refund_lines": [
                {
                    "mp_line_number": "2",
                    "refund_reason": "OTHER",
                    "refund_quantity": 1,
                    "currency": "EUR",
                    "item_refund": "9.99",
                    "shipping_refund": "1.00",
                    "refund_notes": "courtesy",
                }
            ]
        },
    )

    # The marketplace reads, checks and answers each one.
    ret_b_state = "REJECTED" if rejected_state else "AWAITING_AUTHORIZATION"

    def finished() -> bool:
        ret_a = Return.objects.filter(mp_return_number="RET-A").first()
        ret_b = Return.objects.filter(mp_return_number="RET-B").first()
        refunds = dict(SellerRefund.objects.values_list("refund_id", "status"))
        return bool(
            ret_a
            and ret_a.status == "COMPLETED"
            and ret_b
            and ret_b.status == ret_b_state
            and refunds.get(str(within["feedamp_refund_id"])) == "COMPLETE"
            and refunds.get(str(above["feedamp_refund_id"])) == "PAUSED"
        )

    wait_for(lambda: _pulled(finished), timeout=40, what="returns and refunds answered")

    ret_a = Return.objects.get(mp_return_number="RET-A")
    assert ret_a.rma == "RMA-1"
    # The seller's authorization was seen (the authorization wait); RET-B had none.
    assert ret_a.authorized_at is not None
    assert ret_a.authorized_at.date() >= ret_a.request_date
    assert Return.objects.get(mp_return_number="RET-B").authorized_at is None
    ledger = {
        (e.return_request_id, e.refund_id): (e.amount, e.currency)
        for e in RefundLedgerEntry.objects.all()
    }
    refund_within = SellerRefund.objects.get(refund_id=str(within["feedamp_refund_id"]))
    refund_above = SellerRefund.objects.get(refund_id=str(above["feedamp_refund_id"]))
    assert ledger == {
        (ret_a.pk, None): (Decimal("14.83"), "EUR"),
        (None, refund_within.pk): (Decimal("13.33"), "EUR"),
    }
    assert [e["code"] for e in refund_above.errors] == ["EXCESS_ITEM_REFUND"]
    # The platform's record agrees.
    assert (_platform_return(platform, number, "RET-A") or {})["status"] == "COMPLETED"
    assert (_platform_return(platform, number, "RET-B") or {})["status"] == ret_b_state
    # Never authorized: overdue for staff (reading A); refused in so many words (B).
    overdue = [r.mp_return_number for r in overdue_returns()]
    assert overdue == ([] if rejected_state else ["RET-B"])
    staff = page_text(staff_client.get("/dashboard/returns/"))
    assert ("RET-B" in staff) is not rejected_state
    refunds = {
        str(r["feedamp_refund_id"]): r
        for r in sandbox.control("GET", "/refunds")["refunds"]
        if r["mp_order_number"] == number
    }
    assert refunds[str(within["feedamp_refund_id"])]["status"] == "COMPLETE"
    refused = refunds[str(above["feedamp_refund_id"])]
    assert refused["status"] == "PAUSED"
    assert [e["code"] for e in refused["errors"]] == ["EXCESS_ITEM_REFUND"]
