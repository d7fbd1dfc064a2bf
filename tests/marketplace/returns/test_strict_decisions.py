"""No record is accepted on an amount we cannot read: the issue's "Must show" at the
decision level. One listing page holds refunds of 1e300, "12,50" and a null tax beside
valid ones, and returns come back REFUNDED with no lines, a line named twice, or an
amount finer than the cent: the valid ones are decided, paid in the ledger and completed;
the bad ones are refused with their codes (sent as the platform's OTHER, our code named
in the message); nothing lands in the ledger at 0.00; the next pull runs clean.

(The pull's isolation of a record that fails for other reasons is the pull's own tests.)
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from marketplace.returns.intake_schema import ReturnIn
from marketplace.returns.models import Decision, RefundLedgerEntry, Return, SellerRefund
from marketplace.returns.services.decide import refund_decide, return_decide
from marketplace.returns.services.intake import return_create
from marketplace.returns.services.steps import return_steps_drain
from marketplace.sync.pull import seller_after_sale_pull
from tests.marketplace.returns.conftest import FakeOrderSource, refund_line, shipped_order

pytestmark = pytest.mark.django_db

D = Decimal


def _bad(line: dict[str, Any], **amounts: Any) -> dict[str, Any]:
    return {**line, **amounts}


def _sent_errors(fake: FakeOrderSource, name: str) -> dict[str, list[dict[str, Any]]]:
    return {str(args[1]): args[2] for call, args in fake.calls if call == name}


def test_bad_amounts_on_a_page_are_refused_with_their_codes_and_the_valid_ones_complete(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    # Given one page of five refunds on a line the buyer paid 24.00 for
    order = shipped_order()
    number = order.mp_order_number
    fake_platform.add_refund(1, number, [refund_line(item="5.00")])
    fake_platform.add_refund(2, number, [_bad(refund_line(), item_refund=1e300)])
    fake_platform.add_refund(3, number, [_bad(refund_line(), item_refund="12,50")])
    fake_platform.add_refund(4, number, [_bad(refund_line(item="12.50"), item_tax_refund=None)])
    fake_platform.add_refund(5, number, [refund_line(item="3.00", item_tax="0.40")])

    # When the seller's refunds are pulled and the platform steps sent
    result = seller_after_sale_pull(seller_id=order.seller_id)
    return_steps_drain()

    # Then the valid ones are accepted, in the ledger at exactly their amounts, completed
    assert result.error == ""
    decisions = dict(SellerRefund.objects.values_list("refund_id", "decision"))
    assert decisions == {
        "1": Decision.ACCEPTED,
        "2": Decision.REFUSED,
        "3": Decision.REFUSED,
        "4": Decision.REFUSED,
        "5": Decision.ACCEPTED,
    }
    ledger = sorted((e.refund.refund_id, e.amount) for e in RefundLedgerEntry.objects.all())
    assert ledger == [("1", D("5.00")), ("5", D("3.40"))]
    assert {r for _, r in [c for c in fake_platform.calls if c[0] == "complete_refund"]} == {
        (number, "1"),
        (number, "5"),
    }
    # and the bad ones are refused with their own codes, named in the message sent
    refused = {r.refund_id: r.errors for r in SellerRefund.objects.filter(decision="refused")}
    assert {k: [e["problem"] for e in v] for k, v in refused.items()} == {
        "2": ["AMOUNT_OUT_OF_RANGE"],
        "3": ["INVALID_AMOUNT"],
        "4": ["MISSING_AMOUNT"],
    }
    sent = _sent_errors(fake_platform, "post_refund_errors")
    assert sorted(sent) == ["2", "3", "4"]
    assert sent["3"] == [
        {"code": "OTHER", "message": 'INVALID_AMOUNT: line 1 item_refund: "12,50" is not a number'}
    ]
    assert sent["4"][0]["message"] == (
        "MISSING_AMOUNT: line 1 item_tax_refund: the amount is missing (null); "
        "an amount is required"
    )
    assert "1e+300 is out of range" in sent["2"][0]["message"]
    # The unreadable amounts are stored as unknown, never as 0.00.
    assert SellerRefund.objects.get(refund_id="3").lines.get().item_refund is None
    # And the seller's next pull runs clean, deciding nothing again.
    again = seller_after_sale_pull(seller_id=order.seller_id)
    assert (again.error, again.decided) == ("", 0)
    assert RefundLedgerEntry.objects.count() == 2


def _placed_return(order: Any, number: str, quantity: int = 1) -> Return:
    data = ReturnIn.model_validate(
        {
            "mp_return_number": number,
            "reason": "x",
            "return_lines": [{"mp_line_number": "1", "quantity": quantity}],
        }
    )
    return_create(mp_order_number=order.mp_order_number, data=data)
    return Return.objects.get(mp_return_number=number)


def _line(label: str = "1", principal: Any = 10.8, shipping: Any = 0) -> dict[str, Any]:
    return {
        "mp_return_line_number": label,
        "principal_refund_amount": principal,
        "shipping_refund_amount": shipping,
    }


def test_refunded_returns_with_no_lines_twice_a_line_or_sub_cent_amounts_are_refused(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    # Given four returns of one unit each on a 24.00 line, pushed to the platform
    order = shipped_order(
        lines=[{"quantity": 4, "unit_price": "6.00"}],
    )
    number = order.mp_order_number
    for name in ("EMPTY", "TWICE", "FINE", "GOOD"):
        _placed_return(order, name)
    return_steps_drain()
    # When the seller refunds them: no lines, one line named twice, 13.335 + 1.005, 6.00
    answers = {
        "EMPTY": [],
        "TWICE": [_line(principal=6), _line(principal=6)],
        "FINE": [_line(principal="13.335", shipping=1.005)],
        "GOOD": [_line(principal=5.5, shipping="0.50")],
    }
    for name, lines in answers.items():
        fake_platform.set_return(number, name, "REFUNDED")
        fake_platform.return_refunds[(number, name)] = lines
    result = seller_after_sale_pull(seller_id=order.seller_id)
    return_steps_drain()

    # Then only the good one is accepted: ledger 6.00, exactly what its line takes
    assert result.error == ""
    decisions = dict(Return.objects.values_list("mp_return_number", "decision"))
    assert decisions == {
        "EMPTY": "refused",
        "TWICE": "refused",
        "FINE": "refused",
        "GOOD": "accepted",
    }
    entry = RefundLedgerEntry.objects.get()
    good = Return.objects.get(mp_return_number="GOOD").lines.get()
    assert entry.amount == good.principal_refund_amount + good.shipping_refund_amount == D("6.00")
    problems = {
        r.mp_return_number: [e["problem"] for e in r.errors]
        for r in Return.objects.filter(decision="refused")
    }
    assert problems == {
        "EMPTY": ["NO_REFUND_LINES"],
        "TWICE": ["DUPLICATE_LINE"],
        "FINE": ["AMOUNT_TOO_PRECISE", "AMOUNT_TOO_PRECISE"],
    }
    sent = _sent_errors(fake_platform, "post_return_errors")
    assert sent["TWICE"] == [
        {
            "code": "OTHER",
            "message": "DUPLICATE_LINE: line 1 is named 2 times in the return's refund",
            "mp_return_line_number": "1",
        }
    ]
    assert "13.335" in sent["FINE"][0]["message"]
    assert [c for c in fake_platform.calls if c[0] == "complete_return"] == [
        ("complete_return", (number, "GOOD"))
    ]


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (None, "NO_REFUND_LINES"),
        ([_line(principal=None)], "MISSING_AMOUNT"),
        ([{"mp_return_line_number": "1", "principal_refund_amount": 6}], "MISSING_AMOUNT"),
        ([_line(principal=True)], "INVALID_AMOUNT"),
        ([_line(principal=float("nan"))], "INVALID_AMOUNT"),
        ([_line(principal=99999999999)], "AMOUNT_OUT_OF_RANGE"),
        ([_line(principal=23.995)], "AMOUNT_TOO_PRECISE"),
        (["not an object"], "INVALID_AMOUNT"),
    ],
)
def test_a_return_is_never_accepted_on_an_amount_it_cannot_read(
    wakes: list[str], lines: Any, problem: str
) -> None:
    order = shipped_order()
    ret = _placed_return(order, "R1")

    assert return_decide(return_pk=ret.pk, refund_lines=lines) == Decision.REFUSED

    ret.refresh_from_db()
    assert [e["problem"] for e in ret.errors] == [problem]
    assert not RefundLedgerEntry.objects.exists()


def test_a_yen_return_takes_whole_yen_and_the_ledger_records_exactly_that(
    wakes: list[str],
) -> None:
    order = shipped_order(currency="JPY", lines=[{"quantity": 2, "unit_price": "1500"}])
    ret = _placed_return(order, "R1")

    assert return_decide(return_pk=ret.pk, refund_lines=[_line(principal=1.5)]) == "refused"
    ret2 = _placed_return(order, "R2")
    assert return_decide(return_pk=ret2.pk, refund_lines=[_line(principal=1500)]) == "accepted"
    entry = RefundLedgerEntry.objects.get()
    assert (entry.amount, entry.amount_in_unit, str(entry.amount_in_unit)) == (
        D("1500"),
        D("1500"),
        "1500",
    )


def test_a_stored_refund_finer_than_the_yen_is_refused_not_rounded(wakes: list[str]) -> None:
    # A row stored before the strict reading (10.50 in a yen order): never decided on a
    # rounded amount, and never a crash that would stop the seller's other refunds.
    order = shipped_order(currency="JPY", lines=[{"quantity": 2, "unit_price": "1500"}])
    refund = SellerRefund.objects.create(
        seller=order.seller, order=order, refund_id="1", status="CREATED"
    )
    refund.lines.create(
        mp_line_number="1",
        order_line=order.lines.get(),
        currency="JPY",
        refund_quantity=1,
        item_refund=D("10.50"),
    )

    assert refund_decide(refund_pk=refund.pk) == Decision.REFUSED

    refund.refresh_from_db()
    assert [e["problem"] for e in refund.errors] == ["AMOUNT_TOO_PRECISE"]
    assert not RefundLedgerEntry.objects.exists()
