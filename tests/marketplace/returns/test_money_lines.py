"""The typed money lines (``money_lines.py``) and what the one decision path writes from
them: the readings table per kind of line, the return answer's reading, and the ledger's
parts per order line for a refund and a return alike."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from marketplace.returns.models import Decision, RefundLedgerEntry, Return, SellerRefund
from marketplace.returns.money_lines import (
    MoneyLine,
    RefundAmounts,
    ReturnAmounts,
    return_refund_lines_read,
)
from marketplace.returns.services.decide import refund_decide, return_decide
from tests.marketplace.returns.conftest import shipped_order
from tests.marketplace.returns.test_money import new_refund, new_return

D = Decimal


def test_a_refund_line_takes_item_tax_and_shipping_less_the_discount() -> None:
    amounts = RefundAmounts(D("5.00"), D("0.80"), D("2.20"), D("0.20"), D("0.60"))
    line = MoneyLine("1", "1", "USD", amounts, quantity=1)
    assert line.takes == D("7.60")
    assert line.parts() == {
        "item_refund": D("5.00"),
        "item_tax_refund": D("0.80"),
        "shipping_refund": D("2.20"),
        "shipping_tax_refund": D("0.20"),
        "discount_refund": D("0.60"),
    }


def test_a_return_line_takes_principal_and_shipping() -> None:
    line = MoneyLine("1", "1", "JPY", ReturnAmounts(D("1500"), D("300")))
    assert (line.takes, line.quantity) == (D("1800"), None)
    assert line.parts() == {
        "principal_refund_amount": D("1500"),
        "shipping_refund_amount": D("300"),
    }


def test_a_return_answer_is_read_strictly_line_by_line() -> None:
    read, problems = return_refund_lines_read(
        [
            {"mp_return_line_number": "1", "principal_refund_amount": "9.20"},
            {
                "mp_return_line_number": "2",
                "principal_refund_amount": 3,
                "shipping_refund_amount": 0,
            },
            "not an object",
        ],
        currency="USD",
    )
    assert [(r.label, r.principal_refund_amount, r.shipping_refund_amount) for r in read] == [
        ("1", D("9.20"), None),
        ("2", D("3.00"), D("0.00")),
    ]
    # A line with an amount missing is not judged (never 0.00); the other one is.
    assert [r.amounts for r in read] == [None, ReturnAmounts(D("3.00"), D("0.00"))]
    assert [(p.code, p.label) for p in problems] == [
        ("INVALID_AMOUNT", ""),
        ("MISSING_AMOUNT", "1"),
    ]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"lines": []}, "the return's refund has no lines (not a list)"),
        ([], "the return is refunded with no lines"),
    ],
)
def test_a_return_answer_without_lines_is_one_problem(answer: Any, message: str) -> None:
    read, problems = return_refund_lines_read(answer, currency="USD")
    assert read == []
    assert [(p.code, p.message) for p in problems] == [("NO_REFUND_LINES", message)]


@pytest.mark.django_db
def test_the_ledger_holds_each_order_lines_parts_for_a_refund_and_a_return(
    wakes: list[str],
) -> None:
    # Given a 24.00 line, a refund naming it twice (one v2 refund listed as two v1 lines)
    order = shipped_order()
    refund: SellerRefund = new_refund(
        order,
        "1",
        {"item": "5.00", "item_tax": "0.80"},
        {"item": "1.00", "shipping": "2.20", "discount": "0.50"},
    )
    ret: Return = new_return(order)
    # When both are decided
    assert refund_decide(refund_pk=refund.pk) == Decision.ACCEPTED
    verdict = return_decide(
        return_pk=ret.pk,
        refund_lines=[
            {
                "mp_return_line_number": "1",
                "principal_refund_amount": "9.20",
                "shipping_refund_amount": "0.80",
            }
        ],
    )
    # Then each ledger row holds the amount decided and its parts, in the currency's unit
    assert verdict == Decision.ACCEPTED
    by_refund = RefundLedgerEntry.objects.get(refund=refund)
    assert (by_refund.amount, by_refund.detail) == (
        D("8.50"),
        {
            "item_refund": "6.00",
            "item_tax_refund": "0.80",
            "shipping_refund": "2.20",
            "shipping_tax_refund": "0.00",
            "discount_refund": "0.50",
        },
    )
    by_return = RefundLedgerEntry.objects.get(return_request=ret)
    assert (by_return.amount, by_return.detail) == (
        D("10.00"),
        {"principal_refund_amount": "9.20", "shipping_refund_amount": "0.80"},
    )
