"""The money of one order as staff read it: per line (price, tax, shipping, discount,
paid) and for the order (items, tax, shipping, discounts, total, refunded so far), in
Decimal, from the rows the order page has already read (no query of its own)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from marketplace.orders.models import OrderLine
from marketplace.returns.models import RefundLedgerEntry
from marketplace.returns.money import line_discounts, line_paid, line_taxes, money

ZERO = Decimal("0")


@dataclass(frozen=True)
class LineMoney:
    unit_price: Decimal
    items: Decimal  # quantity x unit price
    tax: Decimal
    shipping: Decimal
    discount: Decimal
    paid: Decimal


@dataclass(frozen=True)
class OrderMoney:
    lines: dict[int, LineMoney]  # by OrderLine id
    items: Decimal
    tax: Decimal
    shipping: Decimal
    discount: Decimal
    total: Decimal
    refunded: Decimal  # every refund the ledger holds for the order (each paid once)

    @property
    def kept(self) -> Decimal:
        return self.total - self.refunded


def line_money(line: OrderLine) -> LineMoney:
    return LineMoney(
        unit_price=money(line.unit_price),
        items=line.quantity * money(line.unit_price),
        tax=line_taxes(line),
        shipping=money(line.shipping_price),
        discount=line_discounts(line),
        paid=line_paid(line),
    )


def order_money(lines: Iterable[OrderLine], ledger: Iterable[RefundLedgerEntry]) -> OrderMoney:
    by_line = {line.id: line_money(line) for line in lines}
    values = list(by_line.values())
    return OrderMoney(
        lines=by_line,
        items=sum((m.items for m in values), ZERO),
        tax=sum((m.tax for m in values), ZERO),
        shipping=sum((m.shipping for m in values), ZERO),
        discount=sum((m.discount for m in values), ZERO),
        total=sum((m.paid for m in values), ZERO),
        refunded=sum((money(entry.amount) for entry in ledger), ZERO),
    )
