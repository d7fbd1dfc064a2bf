"""Staff and seller pages of returns and refunds."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from marketplace.returns.models import PlatformStep, RefundLedgerEntry, SellerRefund
from marketplace.returns.services.decide import refund_decide
from tests.marketplace.returns.conftest import shipped_order
from tests.marketplace.returns.test_money import new_refund, new_return
from tests.support.app_fixtures import page_text, signed_in
from tests.support.factories import PlatformConnectionFactory

pytestmark = pytest.mark.django_db


def _world(seller: Any) -> Any:
    PlatformConnectionFactory(seller=seller)
    order = shipped_order(seller=seller)
    refund_decide(refund_pk=new_refund(order, "11", {"item": "5.00"}).pk)
    refund_decide(refund_pk=new_refund(order, "12", {"item": "30.00"}).pk)
    ret = new_return(order, "RET-9")
    ret.status = "AWAITING_AUTHORIZATION"
    ret.respond_date = "2020-01-01"
    ret.save()
    PlatformStep.objects.filter(kind="complete_refund").update(
        status="failed", failures=8, last_error="platform said 500"
    )
    return order


def test_the_staff_order_page_shows_returns_refunds_ledger_and_timeline(
    staff_client: Client, seller: Any, wakes: list[str]
) -> None:
    order = _world(seller)
    text = page_text(staff_client.get(f"/dashboard/orders/{order.id}/"))
    assert "Seller refund 11" in text
    assert "Seller refund 12" in text
    assert "EXCESS_ITEM_REFUND" in text
    assert "Return RET-9" in text
    assert '<td class="num nowrap">€5.00</td>' in text  # the ledger, in the order's currency
    assert "Seller refund 12 refused" in text  # the timeline


def test_the_waiting_list_shows_stuck_calls_unanswered_refused_and_unpaid_and_retries(
    staff_client: Client, seller: Any, wakes: list[str]
) -> None:
    _world(seller)
    text = page_text(staff_client.get("/dashboard/returns/"))
    assert "platform said 500" in text
    assert "RET-9" in text
    assert "EXCESS_ITEM_REFUND" in text
    assert '<td class="num nowrap">€5.00</td>' in text  # the unpaid ledger entry
    key = RefundLedgerEntry.objects.get().payment_key
    assert f'<code class="small">{key}</code>' in text  # what the payments side pays against
    assert 'id="retry-step-' in text
    assert "data-confirm" not in text  # a retry is harmless: it asks nothing
    step = PlatformStep.objects.get(kind="complete_refund")
    response = staff_client.post(f"/dashboard/returns/steps/{step.pk}/retry/")
    assert response.status_code == 302
    step.refresh_from_db()
    assert (step.status, step.failures) == ("pending", 0)


def test_the_waiting_list_is_staff_only(seller_client: Client) -> None:
    assert seller_client.get("/dashboard/returns/").status_code in (302, 403)


def test_the_seller_sees_returns_to_answer_and_refused_refunds_in_plain_words(
    seller: Any, wakes: list[str]
) -> None:
    _world(seller)
    text = page_text(signed_in(seller.user).get("/sellers/orders/returns/"))
    assert "RET-9" in text
    assert "Refund above what the buyer paid" in text
    assert "What to do" in text


def test_the_seller_does_not_see_another_sellers_returns(
    seller: Any, other_seller: Any, wakes: list[str]
) -> None:
    _world(other_seller)
    text = page_text(signed_in(seller.user).get("/sellers/orders/returns/"))
    assert "RET-9" not in text
    assert "Refund above" not in text


def test_mark_paid_out_marks_each_entry_once(seller: Any, wakes: list[str]) -> None:
    from django.core.management import call_command

    _world(seller)
    call_command("mark_refunds_paid_out", "--all")
    first = RefundLedgerEntry.objects.get().paid_out_at
    call_command("mark_refunds_paid_out", "--all")
    assert RefundLedgerEntry.objects.get().paid_out_at == first
    assert SellerRefund.objects.get(refund_id="11").ledger.get().amount == Decimal("5.00")


def test_the_seller_reads_an_unreadable_amount_in_plain_words_and_staff_see_the_code(
    staff_client: Client, seller: Any, wakes: list[str]
) -> None:
    # Given a refund the pull could not read ("12,50")
    PlatformConnectionFactory(seller=seller)
    order = shipped_order(seller=seller)
    refund = new_refund(order, "21", {"item": "0"})
    refund.lines.update(item_refund=None)
    refund.read_problems = [
        {
            "code": "INVALID_AMOUNT",
            "message": 'line 1 item_refund: "12,50" is not a number',
            "label": "1",
        }
    ]
    refund.save(update_fields=["read_problems"])
    refund_decide(refund_pk=refund.pk)
    # Then the seller reads what is wrong and what to do, and staff see our code
    seller_text = page_text(signed_in(seller.user).get("/sellers/orders/returns/"))
    assert "Amount not readable" in seller_text
    assert "12,50" in seller_text
    assert "is not a number" in seller_text
    staff_text = page_text(staff_client.get("/dashboard/returns/"))
    assert "INVALID_AMOUNT: line 1 item_refund" in staff_text
