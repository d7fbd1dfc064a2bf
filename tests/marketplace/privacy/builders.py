"""Orders of a known buyer for the privacy tests: closed or open, with a return, a
seller refund and money in the ledger, built directly in the database."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from django.utils import timezone

from marketplace.orders.models import Order, OrderLine, OrderSync
from marketplace.returns.models import (
    Decision,
    RefundLedgerEntry,
    RefundStatus,
    Return,
    ReturnLine,
    ReturnStatus,
    SellerRefund,
)
from tests.support.factories import OrderFactory

NAME = "Wilhelmina Oakenshaw"
EMAIL = "w.oakenshaw@example.net"
PHONE = "+49 30 1234567"
STREET = "Kastanienallee 77"


def buyer_order(
    *,
    state: str = Order.State.SHIPPED,
    email: str = EMAIL,
    with_return: str | None = ReturnStatus.COMPLETED,
    refund: str | None = None,
    days_ago: int = 0,
    **fields: Any,
) -> Order:
    """An order of the known buyer; its return (``with_return``: its status) accepted
    with 14.83 in the ledger; a seller refund when ``refund`` names its status. Backdated
    ``days_ago`` (order, return and refund ``updated_at``)."""
    order = OrderFactory(
        state=state,
        customer_full_name=NAME,
        customer_email=email,
        customer_phone=PHONE,
        customer_vat="DE123456789",
        ship_full_name=NAME,
        ship_address1=STREET,
        ship_phone=PHONE,
        delivery_notes=f"Ring {NAME}",
        lines=0,
        **fields,
    )
    line = OrderLine.objects.create(
        order=order,
        mp_line_number="1",
        sku="SKU-1",
        product_name="Mug",
        quantity=2,
        unit_price=Decimal("10.00"),
    )
    OrderSync.objects.create(
        order=order,
        status=OrderSync.Status.SYNCED,
        desired_version=1,
        pushed_version=1,
        last_payload={"customer": {"full_name": NAME, "email": email}},
        last_response=f'{{"customer_email": "{email}"}}',
    )
    if with_return:
        ret = Return.objects.create(
            order=order,
            seller=order.seller,
            mp_return_number="R-1",
            reason=f"{NAME} says it broke",
            request_date=date.today(),
            respond_date=date.today() + timedelta(days=14),
            intake_fingerprint="f" * 64,
            status=with_return,
            notes=f"call {PHONE}",
            decision=Decision.ACCEPTED if with_return == ReturnStatus.COMPLETED else "",
        )
        ReturnLine.objects.create(
            return_request=ret,
            mp_return_line_number="1",
            order_line=line,
            quantity=1,
            requested_refund_principal=Decimal("10.00"),
            requested_refund_tax=Decimal("0"),
        )
        if with_return == ReturnStatus.COMPLETED:
            RefundLedgerEntry.objects.create(
                order=order,
                order_line=line,
                return_request=ret,
                currency=order.currency,
                amount=Decimal("14.83"),
                payment_key=f"return:{order.mp_order_number}:{ret.mp_return_number}:{line.mp_line_number}",
            )
    if refund:
        SellerRefund.objects.create(
            seller=order.seller,
            order=order,
            refund_id=f"9{order.pk}",
            status=refund,
            notes=f"refunded {NAME}",
            decision=Decision.ACCEPTED if refund == RefundStatus.COMPLETE else "",
        )
    if days_ago:
        then = timezone.now() - timedelta(days=days_ago)
        Order.objects.filter(pk=order.pk).update(updated_at=then)
        Return.objects.filter(order=order).update(updated_at=then)
        SellerRefund.objects.filter(order=order).update(updated_at=then)
    return order
