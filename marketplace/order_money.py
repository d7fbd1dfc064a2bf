"""The money of an order as people read it: per line (unit price, items, tax, shipping,
discount, total) and for the order (the same, plus what was refunded and what remains),
all in the order's currency. Read-only; shared by the seller portal and the staff
dashboard, so both show the same numbers.

The arithmetic is the returns' readings table (``marketplace/returns/money.py``): a
line's total is what the buyer paid for it; refunded is the ledger's accepted amounts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Sum

from marketplace.orders.models import Order, OrderLine
from marketplace.returns.models import RefundLedgerEntry
from marketplace.returns.money import line_discounts, line_paid, line_taxes, money

ZERO = Decimal("0")


@dataclass(frozen=True)
class LineMoney:
    line: OrderLine
    unit_price: Decimal
    items: Decimal
    tax: Decimal
    shipping: Decimal
    discount: Decimal
    total: Decimal


@dataclass(frozen=True)
class OrderMoney:
    currency: str
    lines: list[LineMoney]
    items: Decimal
    tax: Decimal
    shipping: Decimal
    discount: Decimal
    total: Decimal
    refunded: Decimal

    @property
    def kept(self) -> Decimal:
        """What the buyer paid less what was refunded to them."""
        return self.total - self.refunded


def line_money(line: OrderLine) -> LineMoney:
    return LineMoney(
        line=line,
        unit_price=money(line.unit_price),
        items=line.quantity * money(line.unit_price),
        tax=line_taxes(line),
        shipping=money(line.shipping_price),
        discount=line_discounts(line),
        total=line_paid(line),
    )


def order_money(
    order: Order, *, lines: Iterable[OrderLine] | None = None, refunded: Decimal | None = None
) -> OrderMoney:
    """The order's money (its lines as prefetched, or given) and the refunds the ledger
    holds for it (``refunded`` when the caller read the ledger already, else one query)."""
    moneys = [line_money(line) for line in (order.lines.all() if lines is None else lines)]
    if refunded is None:
        refunded = RefundLedgerEntry.objects.filter(order=order).aggregate(s=Sum("amount"))["s"]
    return OrderMoney(
        currency=order.currency,
        lines=moneys,
        items=sum((m.items for m in moneys), start=ZERO),
        tax=sum((m.tax for m in moneys), start=ZERO),
        shipping=sum((m.shipping for m in moneys), start=ZERO),
        discount=sum((m.discount for m in moneys), start=ZERO),
        total=sum((m.total for m in moneys), start=ZERO),
        refunded=refunded or ZERO,
    )


def order_total(order: Order) -> Decimal:
    """What the buyer paid for the whole order (its lines as prefetched: no query)."""
    return sum((line_paid(line) for line in order.lines.all()), start=ZERO)
