"""What a buyer paid for an order line, and what a refund or a return takes from it.

The readings table of ``returns-refunds-contract.md``, in one place, in Decimal:

* paid for a line = ``quantity x unit_price`` + the line's ``taxes`` amounts +
  ``shipping_price`` - the line's ``discounts`` amounts (taxes and discounts are line
  totals, not per unit);
* a seller refund line takes ``item + item_tax + shipping + shipping_tax - discount``;
* a return line takes ``principal_refund_amount + shipping_refund_amount``.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from marketplace.orders.models import OrderLine

CENT = Decimal("0.01")
ZERO = Decimal("0")


def money(value: Any) -> Decimal:
    """A stored or sent amount as a Decimal (via its text: never float arithmetic)."""
    return Decimal(str(value))


def _amounts(entries: Iterable[Any]) -> Decimal:
    return sum((money(entry["amount"]) for entry in entries if isinstance(entry, dict)), start=ZERO)


def line_taxes(line: OrderLine) -> Decimal:
    return _amounts(line.taxes or [])


def line_discounts(line: OrderLine) -> Decimal:
    return _amounts(line.discounts or [])


def line_paid(line: OrderLine) -> Decimal:
    """What the buyer paid for ``line``."""
    return (
        line.quantity * money(line.unit_price)
        + line_taxes(line)
        + money(line.shipping_price)
        - line_discounts(line)
    )


def _share(total: Decimal, part: int, whole: int) -> Decimal:
    if whole <= 0:
        return ZERO
    return (total * part / whole).quantize(CENT, rounding=ROUND_HALF_UP)


def requested_refund(line: OrderLine, quantity: int) -> tuple[Decimal, Decimal]:
    """(principal, tax) the buyer asks back for ``quantity`` units of ``line``: the units'
    price less their share of the line's discounts, and their share of its taxes.
    Shipping is not asked for; the seller decides whether to refund it."""
    principal = quantity * money(line.unit_price) - _share(
        line_discounts(line), quantity, line.quantity
    )
    return principal.quantize(CENT), _share(line_taxes(line), quantity, line.quantity)
