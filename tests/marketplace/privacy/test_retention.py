"""Issue 30, point 6: buyer data is kept only as long as needed.

An order closed (settled, its returns and refunds final) and untouched for
BUYER_DATA_RETENTION_DAYS has its buyer data replaced by a pseudonym by the daily job;
order numbers, lines, money and the ledger stay. Anything still open or recent stays.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db.models import ProtectedError, Sum

from marketplace.orders.models import Order, OrderLine, OrderSync, SyncEvent
from marketplace.platform.models import PlatformCall
from marketplace.privacy.models import ErasedOrder
from marketplace.privacy.retention import buyer_data_retention_apply
from marketplace.returns.models import RefundLedgerEntry, RefundStatus, Return, ReturnStatus
from tests.marketplace.privacy.builders import EMAIL, NAME, PHONE, STREET, buyer_order

pytestmark = pytest.mark.django_db


def _personal_values(order: Order) -> list[str]:
    order.refresh_from_db()
    sync = OrderSync.objects.get(order=order)
    texts = [
        order.customer_full_name,
        order.customer_email,
        order.customer_phone,
        order.customer_vat,
        order.ship_full_name,
        order.ship_address1,
        order.ship_phone,
        order.delivery_notes,
        str(sync.last_payload),
        sync.last_response,
        *[f"{r.reason} {r.notes}" for r in Return.objects.filter(order=order)],
        *[r.notes for r in order.seller_refunds.all()],
    ]
    return [v for v in (NAME, EMAIL, PHONE, STREET) if any(v in t for t in texts)]


def test_an_order_closed_past_the_retention_gets_a_pseudonym_and_keeps_its_money(
    settings: Any,
) -> None:
    settings.BUYER_DATA_RETENTION_DAYS = 365
    order = buyer_order(refund=RefundStatus.COMPLETE, days_ago=400)
    PlatformCall.objects.create(order_number=order.mp_order_number, method="PUT", path="/x")
    # A platform's refusal quoting the buyer, on the sync row and in the history.
    refusal = f"400: shipping_address.full_name '{NAME}' too long; customer {EMAIL}"
    OrderSync.objects.filter(order=order).update(last_error=refusal)
    event = SyncEvent.objects.create(order=order, kind="push_failed", message=refusal)
    ledger_before = RefundLedgerEntry.objects.aggregate(total=Sum("amount"))["total"]
    assert _personal_values(order) == [NAME, EMAIL, PHONE, STREET]

    erased = buyer_data_retention_apply()

    assert (erased.orders, erased.returns, erased.calls) == (1, 1, 1)
    assert _personal_values(order) == []
    assert order.customer_full_name == f"Buyer {order.pk}"
    assert order.ship_full_name == f"Buyer {order.pk}"
    assert order.customer_email == ""
    # What the business must keep stays: number, lines, money, country, the ledger.
    assert order.mp_order_number.startswith("MP-F")
    assert order.ship_country_code == "GBR"
    assert OrderLine.objects.get(order=order).unit_price == Decimal("10.00")
    assert RefundLedgerEntry.objects.aggregate(total=Sum("amount"))["total"] == ledger_before
    assert ErasedOrder.objects.get(order=order).why == "retention"
    expected = "400: shipping_address.full_name '[erased]' too long; customer [erased]"
    event.refresh_from_db()
    assert event.message == expected
    assert OrderSync.objects.get(order=order).last_error == expected
    # Run again: nothing left to do.
    assert buyer_data_retention_apply().orders == 0


@pytest.mark.parametrize(
    "case",
    ["recent", "open_order", "return_awaiting_recent", "return_authorized", "refund_undecided"],
)
def test_what_is_recent_or_still_open_is_kept(case: str, settings: Any) -> None:
    settings.BUYER_DATA_RETENTION_DAYS = 365
    kwargs: dict[str, Any] = {
        "recent": {"days_ago": 30},
        "open_order": {"days_ago": 400, "state": Order.State.AWAITING_SHIPMENT},
        "return_awaiting_recent": {
            "days_ago": 30,
            "with_return": ReturnStatus.AWAITING_AUTHORIZATION,
        },
        "return_authorized": {"days_ago": 400, "with_return": ReturnStatus.AUTHORIZED},
        "refund_undecided": {"days_ago": 400, "refund": RefundStatus.CREATED},
    }[case]
    order = buyer_order(**kwargs)

    assert buyer_data_retention_apply().orders == 0
    assert _personal_values(order) == [NAME, EMAIL, PHONE, STREET]


def test_a_return_left_awaiting_authorization_for_the_whole_period_does_not_keep_the_data(
    settings: Any,
) -> None:
    # No refusal state is published: a refusing seller may leave it there for ever.
    settings.BUYER_DATA_RETENTION_DAYS = 365
    order = buyer_order(days_ago=400, with_return=ReturnStatus.AWAITING_AUTHORIZATION)

    assert buyer_data_retention_apply().orders == 1
    assert _personal_values(order) == []


def test_the_job_works_in_batches(settings: Any) -> None:
    settings.BUYER_DATA_RETENTION_DAYS = 365
    orders = [buyer_order(days_ago=400, email=f"b{n}@example.net") for n in range(5)]
    assert buyer_data_retention_apply(batch_size=2).orders == 5
    assert ErasedOrder.objects.filter(order__in=orders).count() == 5


def test_deleting_an_order_takes_its_returns_unless_money_was_paid_back() -> None:
    unpaid = buyer_order(with_return=ReturnStatus.REJECTED, refund=RefundStatus.PAUSED)
    unpaid.delete()
    assert not Return.objects.filter(order_id=unpaid.pk).exists()

    # The ledger keeps money, so an order with a ledger row cannot be deleted.
    paid = buyer_order(email="paid@example.net")
    with pytest.raises(ProtectedError):
        paid.delete()
    assert RefundLedgerEntry.objects.filter(order=paid).count() == 1
