"""The typed money of after-sale: one frozen value per line a decision judges.

A seller's refund and a return's refund reach the decision as ``MoneyLine`` values, built
once where their amounts are read strictly (``amounts.py``) and passed as they are to the
checks (``checks.refund_check``) and the ledger (``services/decide.py``). Every amount in
them is a ``Decimal`` already in the order currency's minor unit: nothing downstream
parses, rounds or guesses a missing amount (a line with an amount that could not be read
never becomes a ``MoneyLine``; its problem refuses the decision instead).

What a line takes is the readings table of ``returns-refunds-contract.md``:

* a seller refund line: ``item + item_tax + shipping + shipping_tax - discount``
  (``RefundAmounts``);
* a return line: ``principal_refund_amount + shipping_refund_amount`` (``ReturnAmounts``).

A return's refund comes straight from the platform's answer: ``return_refund_lines_read``
reads it here. A seller's refund is stored first (``services/refund_versions.py``, which
reads each line with ``amounts.line_amounts_read``) and its stored lines become
``MoneyLine`` values when it is decided.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any

from marketplace.returns.amounts import RETURN_AMOUNT_FIELDS, line_amounts_read
from marketplace.returns.problems import Problem
from marketplace.returns.problems import RefundProblemCode as ProblemCode


@dataclass(frozen=True)
class RefundAmounts:
    """A seller refund line's five amounts (the contract requires every one)."""

    item_refund: Decimal
    item_tax_refund: Decimal
    shipping_refund: Decimal
    shipping_tax_refund: Decimal
    discount_refund: Decimal

    @property
    def takes(self) -> Decimal:
        return (
            self.item_refund
            + self.item_tax_refund
            + self.shipping_refund
            + self.shipping_tax_refund
            - self.discount_refund
        )


@dataclass(frozen=True)
class ReturnAmounts:
    """A return line's refund amounts (item with its tax, and shipping)."""

    principal_refund_amount: Decimal
    shipping_refund_amount: Decimal

    @property
    def takes(self) -> Decimal:
        return self.principal_refund_amount + self.shipping_refund_amount


@dataclass(frozen=True)
class MoneyLine:
    """One line of a refund (or a return's refund) as the decision judges it."""

    label: str  # the line as the platform names it (mp_line_number / mp_return_line_number)
    mp_line_number: str  # the order line it takes from ("" when the order has no such line)
    currency: str  # the line's own (a refund line names one; a return's is the order's)
    amounts: RefundAmounts | ReturnAmounts
    quantity: int | None = None  # a seller refund's refund_quantity; None for a return

    @property
    def takes(self) -> Decimal:
        """What this line takes from its order line."""
        return self.amounts.takes

    def parts(self) -> dict[str, Decimal]:
        """The amounts by their contract names (the ledger's ``detail``, for people)."""
        return {part.name: getattr(self.amounts, part.name) for part in fields(self.amounts)}


@dataclass(frozen=True)
class ReturnLineRead:
    """One line of a return's refund as read: each amount in the currency's unit, or
    ``None`` where it could not be read (a ``Problem`` says why; never 0.00)."""

    label: str  # mp_return_line_number
    principal_refund_amount: Decimal | None
    shipping_refund_amount: Decimal | None

    @property
    def amounts(self) -> ReturnAmounts | None:
        """The amounts when both were read, else ``None`` (the line is not judged)."""
        if self.principal_refund_amount is None or self.shipping_refund_amount is None:
            return None
        return ReturnAmounts(self.principal_refund_amount, self.shipping_refund_amount)


def return_refund_lines_read(
    refund_lines: Any, *, currency: str
) -> tuple[list[ReturnLineRead], list[Problem]]:
    """``.../refunds``'s ``merchant_refund_lines`` as the platform sent them, read
    strictly in ``currency``: each line's amounts, and every problem found (one per
    amount that could not be read, and what makes the answer unusable as a whole: not a
    list, no lines (a REFUNDED return refunds something), a line that is not an object, a
    return line named twice: it would count twice in the ledger but once on the return).
    """
    items, problems = _return_items(refund_lines)
    read: list[ReturnLineRead] = []
    for label, item in items:
        amounts, errors = line_amounts_read(
            item, fields=RETURN_AMOUNT_FIELDS, currency=currency, label=label
        )
        problems += [Problem(e.code, e.message, label) for e in errors]
        read.append(ReturnLineRead(label, **amounts))
    return read, problems


def _return_items(refund_lines: Any) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    """The return's refund lines by their return line number, and what makes the answer
    unusable as a whole (see ``return_refund_lines_read``)."""
    if not isinstance(refund_lines, list):
        return [], [
            Problem(ProblemCode.NO_REFUND_LINES, "the return's refund has no lines (not a list)")
        ]
    if not refund_lines:
        return [], [Problem(ProblemCode.NO_REFUND_LINES, "the return is refunded with no lines")]
    items: list[tuple[str, dict[str, Any]]] = []
    problems: list[Problem] = []
    for index, item in enumerate(refund_lines):
        if not isinstance(item, dict):
            problems.append(
                Problem(ProblemCode.INVALID_AMOUNT, f"refund line {index + 1} is not an object")
            )
            continue
        items.append((str(item.get("mp_return_line_number") or ""), item))
    counts = Counter(label for label, _ in items)
    problems += [
        Problem(
            ProblemCode.DUPLICATE_LINE,
            f"line {label} is named {count} times in the return's refund",
            label,
        )
        for label, count in counts.items()
        if count > 1
    ]
    if any(count > 1 for count in counts.values()):
        items = [(label, item) for label, item in items if counts[label] == 1]
    return items, problems
