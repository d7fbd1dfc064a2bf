"""What a buyer paid for an order line, and what a refund or a return takes from it.

The readings table of ``returns-refunds-contract.md``, in one place, in Decimal:

* paid for a line = ``quantity x unit_price`` + the line's ``taxes`` amounts +
  ``shipping_price`` - the line's ``discounts`` amounts (taxes and discounts are line
  totals, not per unit);
* a seller refund line takes ``item + item_tax + shipping + shipping_tax - discount``;
* a return line takes ``principal_refund_amount + shipping_refund_amount``.

Amounts are in the currency's minor unit (``amounts.py``: JPY 0, USD 2, KWD 3). The one
place the marketplace itself rounds is here, ``_share``: the part of a line's discounts
and taxes that falls on the returned units, rounded half up to the minor unit of the
order's currency, once (``amounts.round_to_unit``). Nothing else is rounded: an amount
from the platform finer than the unit is refused, and the ledger stores exactly what was
decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from marketplace.orders.models import OrderLine
from marketplace.returns.amounts import round_to_unit

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


def _share(total: Decimal, part: int, whole: int, currency: str) -> Decimal:
    """``part``/``whole`` of ``total``: half up to ``currency``'s minor unit (the rule)."""
    if whole <= 0:
        return round_to_unit(ZERO, currency)
    return round_to_unit(total * part / whole, currency)


def requested_refund(line: OrderLine, quantity: int) -> tuple[Decimal, Decimal]:
    """(principal, tax) the buyer asks back for ``quantity`` units of ``line``: the units'
    price less their share of the line's discounts, and their share of its taxes, each
    share rounded once (``_share``). Shipping is not asked for; the seller decides
    whether to refund it."""
    currency = line.order.currency
    principal = quantity * money(line.unit_price) - _share(
        line_discounts(line), quantity, line.quantity, currency
    )
    return principal, _share(line_taxes(line), quantity, line.quantity, currency)
