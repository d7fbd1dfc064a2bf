"""Orders, returns and refunds for the seller's pages, built from the models (the rules
that write them are the returns app's and tested there)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.utils import timezone

from marketplace.orders.models import Order, OrderLine, OrderSync, ValidationProblem
from marketplace.returns.models import RefundLedgerEntry, Return, ReturnLine
from tests.support.factories import OrderFactory


def money_order(*, seller: Any, number: str, **fields: Any) -> Order:
    """Line 1: 2 x 10.00, VAT 1.60, shipping 3.00, discount 0.60 → 24.00; line 2:
    1 x 5.50 → 5.50; total 29.50 (EUR unless given)."""
    order = OrderFactory(seller=seller, mp_order_number=number, lines=0, **fields)
    OrderLine.objects.create(
        order=order,
        mp_line_number="1",
        sku="SKU-1",
        product_name="Stoneware mug",
        quantity=2,
        unit_price=Decimal("10.00"),
        shipping_price=Decimal("3.00"),
        taxes=[{"type": "VAT", "amount": "1.60"}],
        discounts=[{"name": "promo", "amount": "0.60", "type": "fixed"}],
    )
    OrderLine.objects.create(
        order=order,
        mp_line_number="2",
        sku="SKU-2",
        product_name="Tea towel",
        quantity=1,
        unit_price=Decimal("5.50"),
    )
    OrderSync.objects.create(
        order=order, status=OrderSync.Status.SYNCED, desired_version=1, pushed_version=1
    )
    return order


def completed_return(order: Order, *, number: str = "RET-7", refunded: str = "12.00") -> Return:
    """A return of one unit of line 1, completed, its refund in the ledger."""
    line = order.lines.get(mp_line_number="1")
    ret = Return.objects.create(
        order=order,
        seller=order.seller,
        mp_return_number=number,
        reason="arrived broken",
        request_date=date(2026, 3, 2),
        respond_date=date(2026, 3, 9),
        status=Return.Status.COMPLETED,
        decision="accepted",
        decided_at=timezone.now(),
    )
    ReturnLine.objects.create(
        return_request=ret,
        mp_return_line_number="1",
        order_line=line,
        quantity=1,
        requested_refund_principal=Decimal("9.70"),
        requested_refund_tax=Decimal("0.80"),
        principal_refund_amount=Decimal(refunded),
        shipping_refund_amount=Decimal("0"),
    )
    RefundLedgerEntry.objects.create(
        order=order,
        order_line=line,
        return_request=ret,
        currency=order.currency,
        amount=Decimal(refunded),
        payment_key=f"return:{order.mp_order_number}:{ret.mp_return_number}:{line.mp_line_number}",
    )
    return ret


def open_return(order: Order, *, number: str = "RET-8") -> Return:
    ret = Return.objects.create(
        order=order,
        seller=order.seller,
        mp_return_number=number,
        reason="wrong size",
        request_date=date(2026, 4, 1),
        respond_date=date(2026, 4, 8),
        status=Return.Status.AWAITING_AUTHORIZATION,
    )
    ReturnLine.objects.create(
        return_request=ret,
        mp_return_line_number="1",
        order_line=order.lines.get(mp_line_number="2"),
        quantity=1,
        requested_refund_principal=Decimal("5.50"),
        requested_refund_tax=Decimal("0"),
    )
    return ret


def problem(order: Order, *, code: str, line: str, message: str = "bad") -> ValidationProblem:
    return ValidationProblem.objects.create(
        order=order,
        code=code,
        mp_line_number=line,
        message=message,
        fingerprint=f"{code}-{line}-{message}",
        last_seen_at=timezone.now(),
    )


def days_ago(days: int) -> datetime:
    return timezone.now() - timedelta(days=days)
