"""No record stops its page, no listing stops the other (issue 30 point 1, issue 29):
each listed refund or return is stored and decided in its own savepoint; a record that
raises is recorded (retried with a cap, then a dead letter); a refused listing is
recorded and retried while the other listing goes on."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from marketplace.platform.errors import PlatformRejected, PlatformUnavailable
from marketplace.returns.intake_schema import ReturnIn
from marketplace.returns.models import (
    RefundLedgerEntry,
    Return,
    ReturnsRecordProblem,
    SellerRefund,
)
from marketplace.returns.selectors import overdue_returns
from marketplace.returns.services.intake import return_create
from marketplace.returns.services.steps import return_steps_drain
from marketplace.sync.models import SellerSync
from marketplace.sync.pull import seller_after_sale_pull
from tests.marketplace.returns.conftest import FakeOrderSource, refund_line, shipped_order
from tests.support.app_fixtures import page_text, signed_in

pytestmark = pytest.mark.django_db


def _return(order: Any, number: str = "R1", **extra: Any) -> Return:
    data = ReturnIn.model_validate(
        {
            "mp_return_number": number,
            "reason": "broken",
            "return_lines": [{"mp_line_number": "1", "quantity": 1}],
            **extra,
        }
    )
    return return_create(mp_order_number=order.mp_order_number, data=data)[0]


@pytest.mark.parametrize(
    "poison",
    [
        # overflows its integer column (SQLite stores any integer: Postgres only)
        pytest.param({"refund_quantity": 99_999_999_999}, marks=pytest.mark.postgres),
        "not a line",  # a line that is no object
    ],
    ids=["column-overflow", "line-not-an-object"],
)
def test_one_refund_that_cannot_be_stored_does_not_stop_the_valid_ones_on_its_page(
    fake_platform: FakeOrderSource, wakes: list[str], poison: Any
) -> None:
    order = shipped_order()
    number = order.mp_order_number
    fake_platform.add_refund(1, number, [refund_line(item="5.00")])
    bad = {**refund_line(item="1.00"), **poison} if isinstance(poison, dict) else poison
    fake_platform.add_refund(2, number, [bad])
    fake_platform.add_refund(3, number, [refund_line(item="4.00")])
    result = seller_after_sale_pull(seller_id=order.seller_id)
    # the valid ones are stored, decided and paid; the listing itself did not fail
    assert result.error == ""
    assert (result.decided, result.record_failures) == (2, 1)
    assert sorted(RefundLedgerEntry.objects.values_list("amount", flat=True)) == [
        Decimal("4.00"),
        Decimal("5.00"),
    ]
    assert set(SellerRefund.objects.values_list("refund_id", flat=True)) == {"1", "3"}
    problem = ReturnsRecordProblem.objects.get()
    assert (problem.kind, problem.record_key, problem.failures) == ("refund", "2", 1)
    assert problem.mp_order_number == number
    assert problem.error
    return_steps_drain()
    assert fake_platform.refunds["1"]["status"] == "COMPLETE"
    assert fake_platform.refunds["3"]["status"] == "COMPLETE"


@pytest.mark.parametrize("amount", [1e300, 99_999_999_999, "12,50", None])
def test_an_unreadable_amount_pauses_its_refund_with_a_code_and_the_others_are_paid(
    fake_platform: FakeOrderSource, wakes: list[str], amount: Any
) -> None:
    """The strict amount reading (``amounts.py``) refuses it with its code: no poison
    record, no 0.00, and the seller gets the code to correct it."""
    order = shipped_order()
    number = order.mp_order_number
    fake_platform.add_refund(1, number, [refund_line(item="5.00")])
    bad = refund_line(item="1.00")
    bad["item_tax_refund"] = amount
    fake_platform.add_refund(2, number, [bad])
    result = seller_after_sale_pull(seller_id=order.seller_id)
    assert (result.decided, result.record_failures) == (2, 0)
    return_steps_drain()
    assert fake_platform.refunds["1"]["status"] == "COMPLETE"
    assert fake_platform.refunds["2"]["status"] == "PAUSED"
    assert fake_platform.refunds["2"]["errors"][0]["code"]
    assert list(RefundLedgerEntry.objects.values_list("amount", flat=True)) == [Decimal("5.00")]
    assert not ReturnsRecordProblem.objects.exists()


@pytest.mark.postgres  # its poison overflows an integer column, which SQLite does not have
def test_a_poison_refund_is_retried_up_to_the_cap_then_a_dead_letter_until_it_changes(
    fake_platform: FakeOrderSource, wakes: list[str], settings: Any
) -> None:
    settings.RETURNS_RECORD_MAX_FAILURES = 3
    order = shipped_order()
    poison = {**refund_line(), "refund_quantity": 10**12}
    fake_platform.add_refund(2, order.mp_order_number, [poison])
    for _ in range(5):
        seller_after_sale_pull(seller_id=order.seller_id)
    problem = ReturnsRecordProblem.objects.get()
    assert problem.failures == 3
    assert problem.dead_at is not None
    # The seller's record changes: tried again, and this time it goes through
    fake_platform.refunds["2"]["merchant_refund_lines"] = [refund_line(item="2.00")]
    result = seller_after_sale_pull(seller_id=order.seller_id)
    assert result.decided == 1
    problem.refresh_from_db()
    assert problem.resolved_at is not None
    assert RefundLedgerEntry.objects.get().amount == Decimal("2.00")


def test_a_refused_returns_listing_is_recorded_and_the_refunds_listing_goes_on(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    _return(order)
    return_steps_drain()
    fake_platform.add_refund(4, order.mp_order_number, [refund_line(item="5.00")])
    fake_platform.fail["list_returns"] = [
        PlatformRejected("status: unknown value REJECTED", status=400)
    ]
    result = seller_after_sale_pull(seller_id=order.seller_id)
    assert "REJECTED" in result.returns_error
    assert result.refunds_error == ""
    assert RefundLedgerEntry.objects.get().amount == Decimal("5.00")
    state = SellerSync.objects.get(seller_id=order.seller_id)
    assert "REJECTED" in state.returns_error
    assert state.returns_failed_at is not None
    assert state.returns_watermark is None  # not moved: the next pull reads it all again
    # retried at the next pull, and cleared when it goes through
    result = seller_after_sale_pull(seller_id=order.seller_id)
    assert result.error == ""
    state.refresh_from_db()
    assert (state.returns_error, state.returns_failed_at) == ("", None)
    assert state.returns_watermark is not None


def test_a_failed_refunds_listing_does_not_stop_the_returns_listing(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    _return(order)
    return_steps_drain()
    fake_platform.set_return(order.mp_order_number, "R1", "AUTHORIZED", rma="RMA-7")
    fake_platform.fail["list_refunds"] = [PlatformRejected("unknown filter status", status=400)]
    result = seller_after_sale_pull(seller_id=order.seller_id)
    assert "unknown filter" in result.refunds_error
    assert Return.objects.get().rma == "RMA-7"
    state = SellerSync.objects.get(seller_id=order.seller_id)
    assert "unknown filter" in state.refunds_error


def test_a_return_that_fails_is_read_again_by_its_own_get(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    _return(order, "R1")
    _return(order, "R2")
    return_steps_drain()
    number = order.mp_order_number
    for ret in ("R1", "R2"):
        fake_platform.set_return(number, ret, "REFUNDED")
        fake_platform.return_refunds[(number, ret)] = [
            {
                "mp_return_line_number": "1",
                "principal_refund_amount": 9.7,
                "shipping_refund_amount": 0,
            }
        ]
    # R1's amounts cannot be read this time (the platform timed out on that one call)
    fake_platform.fail["get_return_refunds"] = [PlatformUnavailable("read timeout")]
    result = seller_after_sale_pull(seller_id=order.seller_id)
    assert (result.error, result.record_failures) == ("", 1)
    decisions = dict(Return.objects.values_list("mp_return_number", "decision"))
    assert decisions == {"R1": "", "R2": "accepted"}
    assert ReturnsRecordProblem.objects.get().record_key == "R1"
    # Nothing else changes at the platform (a later listing would not show R1 again): the
    # next pull reads it by its own GET, and decides it
    fake_platform.updated[f"return:{number}/R1"] = timezone.now() - timedelta(days=1)
    fake_platform.calls.clear()
    seller_after_sale_pull(seller_id=order.seller_id)
    assert ("get_return", (number, "R1")) in fake_platform.calls
    assert Return.objects.get(mp_return_number="R1").decision == "accepted"
    assert ReturnsRecordProblem.objects.get().resolved_at is not None


def test_a_state_we_do_not_know_is_stored_shown_and_never_acted_on(
    fake_platform: FakeOrderSource, wakes: list[str], staff_client: Client
) -> None:
    order = shipped_order()
    _return(order)
    return_steps_drain()
    fake_platform.set_return(order.mp_order_number, "R1", "ON_HOLD_BY_CARRIER")
    seller_after_sale_pull(seller_id=order.seller_id)
    ret = Return.objects.get()
    assert (ret.status, ret.decision, ret.status_known) == ("ON_HOLD_BY_CARRIER", "", False)
    assert "get_return_refunds" not in fake_platform.names()
    text = page_text(staff_client.get("/dashboard/returns/"))
    assert "ON_HOLD_BY_CARRIER" in text


def test_a_return_awaiting_authorization_too_long_is_overdue_for_staff_and_the_seller(
    fake_platform: FakeOrderSource, wakes: list[str], staff_client: Client, settings: Any
) -> None:
    settings.RETURN_AUTHORIZATION_DAYS = 14
    order = shipped_order()
    old = timezone.localdate() - timedelta(days=15)
    _return(order, "R-OLD", request_date=old.isoformat())
    _return(order, "R-NEW", request_date=(timezone.localdate() - timedelta(days=13)).isoformat())
    assert [r.mp_return_number for r in overdue_returns()] == ["R-OLD"]
    staff = page_text(staff_client.get("/dashboard/returns/"))
    assert "awaiting authorization for more than 14 days" in staff
    assert "R-OLD" in staff
    seller = page_text(signed_in(order.seller.user).get("/sellers/orders/returns/"))
    assert "waiting more than 14 days for your authorization" in seller


def test_a_return_of_no_return_type_goes_out_as_such(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    _return(order, return_type="NO_RETURN")
    return_steps_drain()
    _, (number, _, payload) = fake_platform.calls[0]
    assert (payload["mp_order_number"], payload["return_type"]) == (number, "NO_RETURN")


def test_a_refund_whose_decision_always_fails_reaches_the_cap_and_the_others_are_paid(
    fake_platform: FakeOrderSource,
    wakes: list[str],
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from marketplace.returns.services import refund_listing

    settings.RETURNS_RECORD_MAX_FAILURES = 2
    decide = refund_listing.refund_decide

    def failing_for_2(*, refund_pk: int) -> str:
        if SellerRefund.objects.get(pk=refund_pk).refund_id == "2":
            raise ArithmeticError("overflow while deciding")
        return decide(refund_pk=refund_pk)

    monkeypatch.setattr(refund_listing, "refund_decide", failing_for_2)
    order = shipped_order()
    fake_platform.add_refund(1, order.mp_order_number, [refund_line(item="1.00")])
    fake_platform.add_refund(2, order.mp_order_number, [refund_line(item="2.00")])
    for _ in range(4):
        seller_after_sale_pull(seller_id=order.seller_id)
    problem = ReturnsRecordProblem.objects.get()
    assert (problem.record_key, problem.failures) == ("2", 2)
    assert problem.dead_at is not None
    assert "overflow while deciding" in problem.error
    assert list(RefundLedgerEntry.objects.values_list("amount", flat=True)) == [Decimal("1.00")]
