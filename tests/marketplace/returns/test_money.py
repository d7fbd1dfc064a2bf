"""The money rules: what a buyer paid per line, what refunds and returns take, and the
decisions over every accepted one (Decimal, per currency, each refund once)."""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

import pytest
from django.db import connections

from marketplace.returns.checks import LineCost, refund_check
from marketplace.returns.models import (
    Decision,
    PlatformStep,
    RefundLedgerEntry,
    Return,
    ReturnLine,
    SellerRefund,
    SellerRefundLine,
)
from marketplace.returns.money import line_paid, requested_refund
from marketplace.returns.money_lines import MoneyLine, ReturnAmounts
from marketplace.returns.services.decide import refund_decide, return_decide
from tests.marketplace.returns.conftest import shipped_order

pytestmark = pytest.mark.django_db

D = Decimal


def new_refund(order: Any, refund_id: str, *lines: dict[str, Any]) -> SellerRefund:
    refund = SellerRefund.objects.create(
        seller=order.seller, order=order, refund_id=refund_id, status="CREATED"
    )
    order_lines = {line.mp_line_number: line for line in order.lines.all()}
    for spec in lines:
        SellerRefundLine.objects.create(
            refund=refund,
            mp_line_number=spec.get("line", "1"),
            order_line=order_lines.get(spec.get("line", "1")),
            currency=spec.get("currency", order.currency),
            refund_quantity=spec.get("quantity", 1),
            item_refund=D(spec.get("item", "0")),
            item_tax_refund=D(spec.get("item_tax", "0")),
            shipping_refund=D(spec.get("shipping", "0")),
            shipping_tax_refund=D(spec.get("shipping_tax", "0")),
            discount_refund=D(spec.get("discount", "0")),
        )
    return refund


def new_return(order: Any, number: str = "R1", quantity: int = 1) -> Return:
    line = order.lines.get(mp_line_number="1")
    ret = Return.objects.create(
        order=order,
        seller=order.seller,
        mp_return_number=number,
        reason="broken",
        request_date="2026-01-01",
        respond_date="2026-01-15",
        status="REFUNDED",
    )
    principal, tax = requested_refund(line, quantity)
    ReturnLine.objects.create(
        return_request=ret,
        mp_return_line_number="1",
        order_line=line,
        quantity=quantity,
        requested_refund_principal=principal,
        requested_refund_tax=tax,
    )
    return ret


def test_paid_for_a_line_is_units_plus_taxes_plus_shipping_less_discounts() -> None:
    order = shipped_order()
    # 2 x 10.00 + 1.60 + 3.00 - 0.60
    assert line_paid(order.lines.get()) == D("24.00")


def test_requested_refund_is_the_units_share_of_price_discount_and_tax() -> None:
    order = shipped_order()
    assert requested_refund(order.lines.get(), 1) == (D("9.70"), D("0.80"))


def test_partial_refunds_and_a_return_reaching_the_cost_exactly_are_all_accepted(
    wakes: list[str],
) -> None:
    # Given a line the buyer paid 24.00 for
    order = shipped_order()
    # When two seller refunds and a return take 8.00 + 6.00 + 10.00 (= 24.00)
    first = new_refund(order, "1", {"item": "5.00", "item_tax": "0.80", "shipping": "2.20"})
    second = new_refund(
        order, "2", {"item": "5.00", "item_tax": "0.80", "discount": "0.60", "shipping": "0.80"}
    )
    ret = new_return(order)
    assert refund_decide(refund_pk=first.pk) == Decision.ACCEPTED
    assert refund_decide(refund_pk=second.pk) == Decision.ACCEPTED
    verdict = return_decide(
        return_pk=ret.pk,
        refund_lines=[
            {
                "mp_return_line_number": "1",
                "principal_refund_amount": D("9.20"),
                "shipping_refund_amount": D("0.80"),
            }
        ],
    )
    # Then all three are accepted and the ledger holds exactly what the buyer paid
    assert verdict == Decision.ACCEPTED
    amounts = sorted(RefundLedgerEntry.objects.values_list("amount", flat=True))
    assert amounts == [D("6.00"), D("8.00"), D("10.00")]
    assert sum(amounts) == line_paid(order.lines.get())
    assert set(PlatformStep.objects.values_list("kind", flat=True)) == {
        "complete_refund",
        "complete_return",
    }


def test_one_cent_more_than_the_line_cost_is_refused_with_excess_item_refund(
    wakes: list[str],
) -> None:
    order = shipped_order()
    first = new_refund(order, "1", {"item": "20.00"})
    second = new_refund(order, "2", {"item": "4.01"})
    assert refund_decide(refund_pk=first.pk) == Decision.ACCEPTED
    assert refund_decide(refund_pk=second.pk) == Decision.REFUSED
    second.refresh_from_db()
    assert [e["code"] for e in second.errors] == ["EXCESS_ITEM_REFUND"]
    assert "4.01" in second.errors[0]["message"]
    assert "24.00" in second.errors[0]["message"]
    assert RefundLedgerEntry.objects.filter(refund=second).count() == 0
    step = PlatformStep.objects.get(refund=second)
    # The platform is sent the code and message; we keep our own code beside them.
    assert (step.kind, step.body) == (
        "report_refund",
        [{"code": e["code"], "message": e["message"]} for e in second.errors],
    )
    assert second.errors[0]["problem"] == "EXCESS_ITEM_REFUND"


def test_a_return_over_the_line_cost_is_refused_with_excess_refund(wakes: list[str]) -> None:
    order = shipped_order()
    accepted = new_refund(order, "1", {"item": "20.00"})
    refund_decide(refund_pk=accepted.pk)
    ret = new_return(order)
    verdict = return_decide(
        return_pk=ret.pk,
        refund_lines=[
            {
                "mp_return_line_number": "1",
                "principal_refund_amount": D("4.01"),
                "shipping_refund_amount": D("0"),
            }
        ],
    )
    assert verdict == Decision.REFUSED
    ret.refresh_from_db()
    assert ret.errors[0]["code"] == "EXCESS_REFUND"
    assert ret.errors[0]["mp_return_line_number"] == "1"
    assert not RefundLedgerEntry.objects.filter(return_request=ret).exists()


def test_a_refund_in_another_currency_is_refused() -> None:
    order = shipped_order()
    refund = new_refund(order, "1", {"item": "1.00", "currency": "USD"})
    assert refund_decide(refund_pk=refund.pk) == Decision.REFUSED
    refund.refresh_from_db()
    assert [e["code"] for e in refund.errors] == ["CURRENCY_MISMATCH"]
    assert not RefundLedgerEntry.objects.exists()


def test_a_quantity_above_the_ordered_one_is_refused_with_excess_quantity() -> None:
    order = shipped_order()
    refund = new_refund(order, "1", {"item": "1.00", "quantity": 3})
    assert refund_decide(refund_pk=refund.pk) == Decision.REFUSED
    refund.refresh_from_db()
    assert [e["code"] for e in refund.errors] == ["EXCESS_QUANTITY"]


def test_a_line_not_on_the_order_is_refused_with_unknown_line() -> None:
    order = shipped_order()
    refund = new_refund(order, "1", {"item": "1.00", "line": "9"})
    assert refund_decide(refund_pk=refund.pk) == Decision.REFUSED
    refund.refresh_from_db()
    assert [e["code"] for e in refund.errors] == ["UNKNOWN_LINE"]
    assert "line 9" in refund.errors[0]["message"]


def test_a_refund_below_zero_is_refused_and_does_not_make_room_for_another() -> None:
    order = shipped_order()
    # Given a refund whose discount refund is larger than the rest of the line
    negative = new_refund(order, "1", {"item": "1.00", "discount": "6.00"})
    # When the marketplace decides it
    assert refund_decide(refund_pk=negative.pk) == Decision.REFUSED
    negative.refresh_from_db()
    # Then it is refused with the platform's catch-all code, the message naming the line
    assert [e["code"] for e in negative.errors] == ["OTHER"]
    assert "line 1" in negative.errors[0]["message"]
    assert "-5.00" in negative.errors[0]["message"]
    assert not RefundLedgerEntry.objects.exists()
    # and a refund one cent above the line's cost is still refused afterwards
    over = new_refund(order, "2", {"item": "24.01"})
    assert refund_decide(refund_pk=over.pk) == Decision.REFUSED


def test_deciding_twice_writes_one_ledger_row_and_one_step() -> None:
    order = shipped_order()
    refund = new_refund(order, "1", {"item": "5.00"})
    assert refund_decide(refund_pk=refund.pk) == Decision.ACCEPTED
    assert refund_decide(refund_pk=refund.pk) == Decision.ACCEPTED
    assert RefundLedgerEntry.objects.count() == 1
    assert PlatformStep.objects.count() == 1


def test_the_ledger_refuses_a_second_row_for_the_same_refund_and_line() -> None:
    from django.db import IntegrityError, transaction

    order = shipped_order()
    refund = new_refund(order, "1", {"item": "5.00"})
    refund_decide(refund_pk=refund.pk)
    entry = RefundLedgerEntry.objects.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        RefundLedgerEntry.objects.create(
            order=order,
            order_line=entry.order_line,
            refund=refund,
            currency="EUR",
            amount=1,
            payment_key="another key: the per refund and line constraint refuses it",
        )


def test_two_lines_of_one_refund_on_the_same_order_line_are_summed() -> None:
    order = shipped_order()
    refund = new_refund(order, "1", {"item": "12.00"}, {"item": "12.01"})
    assert refund_decide(refund_pk=refund.pk) == Decision.REFUSED


def test_pure_check_on_mixed_currency_costs() -> None:
    costs = {"1": LineCost("1", 1, D("10.00"), D("0"))}
    verdict = refund_check(
        lines=[MoneyLine("1", "1", "USD", ReturnAmounts(D("1.00"), D("0.00")), 1)],
        costs=costs,
        currency="EUR",
    )
    assert [p.code for p in verdict.problems] == ["CURRENCY_MISMATCH"]


@pytest.mark.django_db(transaction=True)
def test_two_refunds_that_each_fit_but_not_together_decided_at_once_the_second_is_refused(
    wakes: list[str],
) -> None:
    # Given two refunds of 14.00 on a line that cost 24.00, decided by two workers at once
    order = shipped_order()
    first = new_refund(order, "1", {"item": "14.00"})
    second = new_refund(order, "2", {"item": "14.00"})
    results: list[str] = []
    barrier = threading.Barrier(2)

    def decide(pk: int) -> None:
        try:
            barrier.wait()
            results.append(refund_decide(refund_pk=pk))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=decide, args=(pk,)) for pk in (first.pk, second.pk)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then exactly one is accepted, and the ledger holds only it
    assert sorted(results) == [Decision.ACCEPTED, Decision.REFUSED]
    assert list(RefundLedgerEntry.objects.values_list("amount", flat=True)) == [D("14.00")]


def test_the_buyers_share_of_taxes_is_rounded_half_up_to_the_currencys_unit() -> None:
    # 3 units, taxes 1.00 and discount 0.10: one unit's share is 0.333… → 0.33 and
    # 0.0333… → 0.03; two units' 0.666… → 0.67 (half up, once, to the cent).
    order = shipped_order(
        currency="USD",
        lines=[
            {
                "quantity": 3,
                "unit_price": "10.00",
                "taxes": [{"type": "VAT", "amount": "1.00"}],
                "discounts": [{"name": "p", "amount": "0.10", "type": "fixed"}],
            }
        ],
    )
    line = order.lines.get()
    assert requested_refund(line, 1) == (D("9.97"), D("0.33"))
    assert requested_refund(line, 2) == (D("19.93"), D("0.67"))


def test_in_yen_the_share_is_rounded_to_whole_yen() -> None:
    order = shipped_order(
        currency="JPY",
        lines=[{"quantity": 2, "unit_price": "1000", "taxes": [{"type": "VAT", "amount": "101"}]}],
    )
    # 101 / 2 = 50.5 → 51 (half up), not 50 (half to even) nor 50.50
    principal, tax = requested_refund(order.lines.get(), 1)
    assert (principal, tax) == (D("1000"), D("51"))
    assert tax.as_tuple().exponent == 0
