"""The marketplace's rules for a seller's refund or a return's refund amounts.

Pure functions over plain values (tested without a database): the lines are the typed
``money_lines.MoneyLine`` values; ``services/decide.py`` feeds them the locked order lines
and what the ledger already holds. The codes live with the other after-sale problem codes
(``returns.problems.RefundProblemCode``), their plain words in
``portal.problem_help.REFUND_HELP``.

Rules (``returns-refunds-contract.md``): a line not on the order → ``UNKNOWN_LINE``; a
currency other than the order's → ``CURRENCY_MISMATCH``; a refund line's quantity above
the order line's → ``EXCESS_QUANTITY``; what this refund takes from a line, with every
earlier *accepted* refund and return of it, above what the buyer paid for the line →
``EXCESS_ITEM_REFUND`` (a seller's refund) / ``EXCESS_REFUND`` (a return). Our own
addition: a line that takes less than zero → ``NEGATIVE_AMOUNT`` (reported as ``OTHER``,
``problems.platform_code``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from marketplace.returns.money_lines import MoneyLine
from marketplace.returns.problems import Problem
from marketplace.returns.problems import RefundProblemCode as ProblemCode

ZERO = Decimal("0")


@dataclass(frozen=True)
class LineCost:
    mp_line_number: str
    quantity: int
    paid: Decimal
    accepted: Decimal  # taken by earlier accepted refunds and returns


@dataclass
class Verdict:
    problems: list[Problem] = field(default_factory=list)
    # mp_line_number → what this refund takes from it (when accepted)
    takes: dict[str, Decimal] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return not self.problems


def refund_check(
    *,
    lines: Sequence[MoneyLine],
    costs: Mapping[str, LineCost],
    currency: str,
    excess_code: str = ProblemCode.EXCESS_ITEM_REFUND,
) -> Verdict:
    """Check one refund's lines against the order's lines (``costs``, by line number)."""
    verdict = Verdict()
    takes: dict[str, Decimal] = {}
    for line in lines:
        cost = costs.get(line.mp_line_number) if line.mp_line_number else None
        if cost is None:
            verdict.problems.append(
                Problem(
                    ProblemCode.UNKNOWN_LINE,
                    f"line {line.label} is not a line of this order",
                    line.label,
                )
            )
            continue
        if line.currency != currency:
            verdict.problems.append(
                Problem(
                    ProblemCode.CURRENCY_MISMATCH,
                    f"line {line.label}: refund in {line.currency or 'no currency'}, "
                    f"the order is in {currency}",
                    line.label,
                )
            )
            continue
        if line.quantity is not None and line.quantity > cost.quantity:
            verdict.problems.append(
                Problem(
                    ProblemCode.EXCESS_QUANTITY,
                    f"line {line.label}: refund quantity {line.quantity} exceeds the "
                    f"ordered quantity {cost.quantity}",
                    line.label,
                )
            )
        if line.takes < ZERO:
            verdict.problems.append(
                Problem(
                    ProblemCode.NEGATIVE_AMOUNT,
                    f"line {line.label}: the refund amounts come to {line.takes}, below zero",
                    line.label,
                )
            )
            continue
        takes[cost.mp_line_number] = takes.get(cost.mp_line_number, ZERO) + line.takes
    for number, amount in takes.items():
        cost = costs[number]
        if cost.accepted + amount > cost.paid:
            already = f" with {cost.accepted} already refunded" if cost.accepted else ""
            label = next((line.label for line in lines if line.mp_line_number == number), number)
            verdict.problems.append(
                Problem(
                    excess_code,
                    f"line {label}: requested refund amount ({amount}){already} exceeds "
                    f"the line's cost ({cost.paid})",
                    label,
                )
            )
    if not verdict.problems:
        verdict.takes = takes
    return verdict
