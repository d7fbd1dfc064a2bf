"""The refund lifecycle end to end over real HTTP: the sandbox (its own process), the
marketplace's Celery worker, and the seller by hand through the sandbox's control API
(posting refunds, resolving paused ones, as its v2 page allows).

* a refund over the line is paused with EXCESS_ITEM_REFUND; the seller corrects it; the
  marketplace decides the corrected version, accepts and completes it; the ledger holds
  exactly the corrected amounts, once;
* a refund paused twice (corrected still over the line), then corrected;
* a refund never corrected stays PAUSED and unpaid, shown to staff and the seller;
* zero sandbox violations; the same under the after-sale readings switched to B.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from marketplace.orders.models import Order, OrderSync
from marketplace.returns.models import RefundLedgerEntry, SellerRefund
from marketplace.sync.fan_out import sellers_after_sale_pull_fan_out, sellers_pull_fan_out
from tests.marketplace.conftest import order_body, wait_for
from tests.support.app_fixtures import Platform, page_text, signed_in

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Every after-sale reading the sandbox keeps, and the answers' shapes, switched to B.
READINGS_B = {
    "return_refusal": "B",
    "return_order_number": "B",
    "next_cursor_last": "B",
    "complete_answer": "B",
    "refund_notes_empty": "B",
}


@pytest.fixture(autouse=True)
def no_violations(platform: Platform) -> Iterator[None]:
    yield
    violations = platform.sandbox.violations()
    assert violations["total"] == 0, violations


def _shipped(number: str) -> bool:
    sellers_pull_fan_out()
    order = Order.objects.filter(mp_order_number=number).select_related("sync").first()
    return bool(order and order.state == "SHIPPED" and order.sync.status == OrderSync.Status.SYNCED)


def place_shipped(platform: Platform, api: Client, number: str) -> None:
    """An order placed through intake, pushed, shipped by the seller and pulled back
    (paid: line 1 43.00, line 2 9.99)."""
    response = api.post(
        "/api/intake/orders", data=json.dumps(order_body(number)), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    wait_for(
        lambda: OrderSync.objects.filter(order__mp_order_number=number, pushed_version=1).exists(),
        what="order pushed",
    )
    platform.sandbox.ship(number)
    wait_for(lambda: _shipped(number), timeout=30, what="order shipped and synced")


def _line(number: str, **amounts: str) -> dict[str, Any]:
    return {
        "mp_line_number": number,
        "refund_reason": "OTHER",
        "refund_quantity": 1,
        "currency": "EUR",
        "refund_notes": "by hand",
        **amounts,
    }


def _platform_refund(platform: Platform, refund_id: int) -> dict[str, Any]:
    rows = platform.sandbox.control("GET", "/refunds")["refunds"]
    return next(r for r in rows if r["feedamp_refund_id"] == refund_id)


def _reaches(refund_id: int, status: str, pause_count: int) -> SellerRefund:
    """Pull until our row of ``refund_id`` is in ``status`` after ``pause_count`` pauses."""

    def there() -> SellerRefund | None:
        sellers_after_sale_pull_fan_out()
        row = SellerRefund.objects.filter(refund_id=str(refund_id)).first()
        if row and row.status == status and row.pause_count == pause_count:
            return row
        return None

    return wait_for(there, timeout=40, what=f"refund {refund_id} {status} x{pause_count}")


def _ledger(refund: SellerRefund) -> list[tuple[str, Decimal]]:
    return sorted(
        (e.order_line.mp_line_number, e.amount)
        for e in RefundLedgerEntry.objects.filter(refund=refund).select_related("order_line")
    )


def _takes(lines: list[dict[str, Any]]) -> Decimal:
    total = Decimal(0)
    for line in lines:
        for name in ("item_refund", "item_tax_refund", "shipping_refund", "shipping_tax_refund"):
            total += Decimal(str(line.get(name) or 0))
        total -= Decimal(str(line.get("discount_refund") or 0))
    return total


@pytest.mark.parametrize("readings", [{}, READINGS_B], ids=["reading-A", "readings-B"])
def test_a_paused_refund_is_corrected_decided_again_and_paid_exactly_once(
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
    number = "MP-LIFE-1"
    place_shipped(platform, api, number)

    # 1. Over line 2 (9.99 paid): paused with EXCESS_ITEM_REFUND, nothing paid.
    over = sandbox.seller_refund(number, _line("2", item_refund="9.99", shipping_refund="1.00"))
    first = over["feedamp_refund_id"]
    paused = _reaches(first, "PAUSED", 1)
    assert [e["code"] for e in paused.errors] == ["EXCESS_ITEM_REFUND"]
    assert not RefundLedgerEntry.objects.filter(refund=paused).exists()
    at_platform = _platform_refund(platform, first)
    assert at_platform["status"] == "PAUSED"
    assert [e["code"] for e in at_platform["errors"]] == ["EXCESS_ITEM_REFUND"]
    # The seller corrects it (cut to what the buyer paid): decided again, paid, completed.
    sandbox.refund_resolve(first, fit=True)
    done = _reaches(first, "COMPLETE", 1)
    corrected = _platform_refund(platform, first)
    assert corrected["status"] == "COMPLETE"
    assert (done.decision, done.version) == ("accepted", 2)
    assert _ledger(done) == [("2", _takes(corrected["merchant_refund_lines"]))]
    assert _ledger(done) == [("2", Decimal("9.99"))]

    # 2. Over line 1 (43.00 paid), corrected still over, paused again, then corrected.
    twice = sandbox.seller_refund(number, _line("1", item_refund="45.00"))
    second = twice["feedamp_refund_id"]
    _reaches(second, "PAUSED", 1)
    sandbox.refund_resolve(second, refund_lines=[_line("1", item_refund="44.00")])
    again = _reaches(second, "PAUSED", 2)
    assert "44.00" in again.errors[0]["message"]
    assert not RefundLedgerEntry.objects.filter(refund=again).exists()
    sandbox.refund_resolve(second, fit=True)
    paid = _reaches(second, "COMPLETE", 2)
    assert _ledger(paid) == [("1", Decimal("43.00"))]

    # 3. Never corrected: line 1 has nothing left. Paused, unpaid, shown as paused.
    never = sandbox.seller_refund(number, _line("1", item_refund="1.00"))
    third = never["feedamp_refund_id"]
    stuck = _reaches(third, "PAUSED", 1)
    for _ in range(3):  # more pulls change nothing
        sellers_after_sale_pull_fan_out()
    stuck.refresh_from_db()
    assert (stuck.status, stuck.pause_count, stuck.decision) == ("PAUSED", 1, "refused")
    assert _platform_refund(platform, third)["status"] == "PAUSED"

    # The ledger holds exactly the corrected amounts, once each.
    ledger = sorted(
        (e.refund.refund_id, e.amount) for e in RefundLedgerEntry.objects.select_related("refund")
    )
    assert ledger == sorted([(str(first), Decimal("9.99")), (str(second), Decimal("43.00"))])

    staff = page_text(staff_client.get("/dashboard/returns/"))
    assert "paused: waiting for the seller to correct it" in staff
    assert str(third) in staff
    assert "EXCESS_ITEM_REFUND" in staff
    portal = page_text(signed_in(connected_seller.user).get("/sellers/orders/returns/"))
    assert "paused: waiting for the seller to correct it" in portal
    assert f"your refund {third}" in portal
