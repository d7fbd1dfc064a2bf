"""A reconciliation pass over real HTTP with the real sandbox: returns and seller refunds.
Each drift is found within one pass; what the app can repair it repairs (the outbox sends
again, the next pull reads), what touches money is left to staff and nothing is paid."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.orders.models import Order
from marketplace.orders.services.push import order_push
from marketplace.reconcile import kinds
from marketplace.reconcile.models import ReconcileRun, RunTrigger
from marketplace.reconcile.seller_pass import seller_reconcile
from marketplace.returns.intake_schema import ReturnIn
from marketplace.returns.models import (
    PlatformStep,
    RefundLedgerEntry,
    Return,
    SellerRefund,
    StepKind,
    StepStatus,
)
from marketplace.returns.services.intake import return_create
from marketplace.returns.services.steps import return_steps_drain
from marketplace.sync.models import SellerSync
from marketplace.sync.pull import seller_pull
from tests.marketplace.conftest import make_order
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.django_db


def reconcile(seller: Any) -> ReconcileRun:
    return seller_reconcile(seller_id=seller.id, trigger=RunTrigger.COMMAND)


def found(run: ReconcileRun) -> list[tuple[str, str, str]]:
    return list(run.findings.order_by("id").values_list("kind", "object_key", "action"))


def shipped(platform: Platform, seller: Any, number: str) -> Order:
    """An order placed, pushed, shipped by the seller, pulled back and pushed SHIPPED;
    and another order still open, so the seller has open work (a pass runs)."""
    order = make_order(number)
    assert order_push(order_id=order.id) == "synced"
    platform.sandbox.ship(number)
    seller_pull(seller_id=seller.id)
    assert order_push(order_id=order.id) == "synced"
    order.refresh_from_db()
    assert order.state == "SHIPPED"
    return order


def drift(platform: Platform, number: str, kind: str, **body: Any) -> dict[str, Any]:
    """A change made at the platform elsewhere: no update time moves (the pull misses it)."""
    return platform.sandbox.control("POST", f"/orders/{number}/drift", {"kind": kind, **body})


def open_order(number: str = "MP-STILL-OPEN") -> None:
    order = make_order(number)
    assert order_push(order_id=order.id) == "synced"


def seller_refund(platform: Platform, number: str, amount: str = "5.00") -> int:
    line = {
        "mp_line_number": "1",
        "refund_reason": "OTHER",
        "refund_quantity": 1,
        "currency": "EUR",
        "item_refund": amount,
        "refund_notes": "goodwill",
    }
    made = platform.sandbox.control("POST", f"/orders/{number}/refunds", {"refund_lines": [line]})
    return int(made["feedamp_refund_id"])


def a_return(number: str, ret: str = "RET-1") -> Return:
    data = ReturnIn.model_validate(
        {
            "mp_return_number": ret,
            "reason": "arrived broken",
            "return_lines": [{"mp_line_number": "2", "quantity": 1}],
        }
    )
    created, _ = return_create(mp_order_number=number, data=data)
    return created


def test_a_refund_complete_at_the_platform_but_not_in_our_ledger_goes_to_staff(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given a refund the seller posted and the platform shows COMPLETE (marked elsewhere),
    # which we never read
    shipped(platform, connected_seller, "MP-R1")
    open_order()
    refund_id = seller_refund(platform, "MP-R1")
    drift(platform, "MP-R1", "refund_status", refund_id=refund_id, status="COMPLETE")
    # When a pass runs
    run = reconcile(connected_seller)
    # Then staff see it with the platform's version, and nothing is paid
    assert found(run) == [(kinds.REFUND_NOT_IN_LEDGER, f"MP-R1/refund {refund_id}", "staff")]
    finding = run.findings.get()
    assert finding.status == "open"
    assert finding.theirs["status"] == "COMPLETE"
    assert finding.ours == {"ledger": "0"}
    assert RefundLedgerEntry.objects.count() == 0


def test_a_refund_in_our_ledger_the_platform_does_not_show_complete_goes_to_staff(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given a refund read and accepted (the ledger pays it), its complete call on its way
    shipped(platform, connected_seller, "MP-R2")
    open_order()
    refund_id = seller_refund(platform, "MP-R2")
    seller_pull(seller_id=connected_seller.id)
    refund = SellerRefund.objects.get(refund_id=str(refund_id))
    assert refund.decision == "accepted"
    assert RefundLedgerEntry.objects.filter(refund=refund).count() == 1
    # While the complete call is on its way, that is no finding
    assert reconcile(connected_seller).findings_count == 0
    # When our outbox holds the call as done, yet the platform still shows it CREATED
    PlatformStep.objects.filter(refund=refund, kind=StepKind.COMPLETE_REFUND).update(
        status=StepStatus.DONE
    )
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.REFUND_LEDGER_NOT_COMPLETE, f"MP-R2/refund {refund_id}", "staff")]
    finding = run.findings.get()
    assert finding.ours["ledger"] == "5.000"
    assert finding.theirs["status"] == "CREATED"


def test_a_refund_to_decide_we_have_not_read_forces_the_next_pull(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    shipped(platform, connected_seller, "MP-R3")
    open_order()
    refund_id = seller_refund(platform, "MP-R3")
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.REFUND_BEHIND_HERE, f"MP-R3/refund {refund_id}", "pull_forced")]
    seller_pull(seller_id=connected_seller.id)
    assert SellerRefund.objects.get(refund_id=str(refund_id)).decision == "accepted"


def test_a_return_the_platform_lost_is_pushed_again(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given a return whose push our outbox holds as done, which the platform never got
    shipped(platform, connected_seller, "MP-RET1")
    ret = a_return("MP-RET1")
    PlatformStep.objects.filter(return_request=ret, kind=StepKind.PUSH_RETURN).update(
        status=StepStatus.DONE
    )
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.RETURN_MISSING, "MP-RET1/RET-1", "resent")]
    step = PlatformStep.objects.get(return_request=ret, kind=StepKind.PUSH_RETURN)
    assert step.status == StepStatus.PENDING
    # the outbox sends it: the platform has it
    return_steps_drain(step_ids=[step.id])
    rows = platform.sandbox.control("GET", "/returns")["returns"]
    assert [(r["mp_order_number"], r["mp_return_number"]) for r in rows] == [("MP-RET1", "RET-1")]
    assert reconcile(connected_seller).findings_count == 0


def test_a_return_further_on_at_the_platform_is_read_by_the_next_pull(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    shipped(platform, connected_seller, "MP-RET2")
    ret = a_return("MP-RET2")
    return_steps_drain(
        step_ids=list(PlatformStep.objects.filter(return_request=ret).values_list("id", flat=True))
    )
    # The platform authorizes it elsewhere: no update time moves (the returns listing's
    # watermark moved past the cursor overlap, which would list it again by chance)
    drift(platform, "MP-RET2", "return_status", mp_return_number="RET-1", status="AUTHORIZED")
    SellerSync.objects.filter(seller=connected_seller).update(
        returns_watermark=timezone.now() + timedelta(minutes=10)
    )
    seller_pull(seller_id=connected_seller.id)
    assert Return.objects.get(pk=ret.pk).status == "AWAITING_AUTHORIZATION"  # missed
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.RETURN_BEHIND_HERE, "MP-RET2/RET-1", "pull_forced")]
    seller_pull(seller_id=connected_seller.id)
    ret.refresh_from_db()
    assert ret.status == "AUTHORIZED"
    assert reconcile(connected_seller).findings_count == 0


def test_a_return_completed_at_the_platform_without_our_ledger_goes_to_staff(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    shipped(platform, connected_seller, "MP-RET3")
    ret = a_return("MP-RET3")
    return_steps_drain(
        step_ids=list(PlatformStep.objects.filter(return_request=ret).values_list("id", flat=True))
    )
    line = ret.lines.get().mp_return_line_number
    drift(
        platform,
        "MP-RET3",
        "return_status",
        mp_return_number="RET-1",
        status="COMPLETED",
        refund_lines=[
            {
                "mp_return_line_number": line,
                "principal_refund_amount": "9.99",
                "shipping_refund_amount": 0,
            }
        ],
    )
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.RETURN_MONEY, "MP-RET3/RET-1", "staff")]
    finding = run.findings.get()
    assert (finding.ours["ledger"], finding.theirs["status"]) == ("0", "COMPLETED")
    assert RefundLedgerEntry.objects.count() == 0


def test_refund_amounts_changed_after_we_paid_go_to_staff(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    # Given a refund read, accepted, paid in our ledger and completed at the platform
    shipped(platform, connected_seller, "MP-R4")
    open_order()
    refund_id = seller_refund(platform, "MP-R4", amount="5.00")
    seller_pull(seller_id=connected_seller.id)
    refund = SellerRefund.objects.get(refund_id=str(refund_id))
    return_steps_drain(
        step_ids=list(PlatformStep.objects.filter(refund=refund).values_list("id", flat=True))
    )
    assert reconcile(connected_seller).findings_count == 0
    # When the platform's amounts change afterwards
    drift(platform, "MP-R4", "refund_amounts", refund_id=refund_id, item_refund="7.25")
    run = reconcile(connected_seller)
    assert found(run) == [(kinds.REFUND_AMOUNTS_DIFFER, f"MP-R4/refund {refund_id}", "staff")]
    finding = run.findings.get()
    assert finding.ours["lines"][0]["item_refund"] == "5.000"
    assert finding.theirs["merchant_refund_lines"][0]["item_refund"] == 7.25
    assert sum(e.amount for e in RefundLedgerEntry.objects.filter(refund=refund)) == 5
