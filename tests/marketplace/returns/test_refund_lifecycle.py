"""The refund lifecycle (CREATED → PAUSED by our errors → CREATED again, corrected →
decided from scratch → COMPLETE), against the in-memory platform; the end-to-end version
runs over HTTP (test_refund_lifecycle_end_to_end.py)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from marketplace.returns.models import PlatformStep, RefundLedgerEntry, SellerRefund
from marketplace.returns.services.pull import seller_returns_pull
from marketplace.returns.services.steps import return_steps_drain
from tests.marketplace.returns.conftest import FakeOrderSource, refund_line, shipped_order
from tests.marketplace.returns.test_steps import due_now

pytestmark = pytest.mark.django_db

# shipped_order's line 1 cost the buyer 24.00
OVER = [refund_line(item="30.00")]
FITS = [refund_line(item="20.00", item_tax="1.50")]


def _round(fake: FakeOrderSource, order: Any) -> SellerRefund:
    """A pull, then the outbox (each decision's call)."""
    seller_returns_pull(seller_id=order.seller_id)
    due_now()
    return_steps_drain()
    return SellerRefund.objects.get()


def test_an_over_refund_is_paused_then_the_corrected_one_is_decided_again_and_paid_once(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    fake_platform.add_refund(5, order.mp_order_number, OVER)
    refund = _round(fake_platform, order)
    # Paused with EXCESS_ITEM_REFUND, nothing paid
    assert fake_platform.refunds["5"]["status"] == "PAUSED"
    assert [e["code"] for e in fake_platform.refunds["5"]["errors"]] == ["EXCESS_ITEM_REFUND"]
    assert (refund.status, refund.decision, refund.pause_count) == ("PAUSED", "refused", 1)
    assert refund.paused_at is not None
    assert not RefundLedgerEntry.objects.exists()
    # A paused refund is not listed: the next pull decides nothing
    assert seller_returns_pull(seller_id=order.seller_id).decided == 0
    # The seller corrects it: it comes back CREATED, same id, new lines
    fake_platform.correct_refund(5, FITS)
    refund = _round(fake_platform, order)
    assert (refund.status, refund.decision, refund.version) == ("COMPLETE", "accepted", 2)
    assert fake_platform.refunds["5"]["status"] == "COMPLETE"
    entries = list(RefundLedgerEntry.objects.values_list("refund_id", "amount"))
    assert entries == [(refund.pk, Decimal("21.50"))]
    # Listed again, nothing more is paid
    seller_returns_pull(seller_id=order.seller_id)
    assert RefundLedgerEntry.objects.count() == 1
    assert fake_platform.names().count("post_refund_errors") == 1


def test_a_refund_corrected_still_over_the_line_is_paused_again_then_paid(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    fake_platform.add_refund(6, order.mp_order_number, OVER)
    _round(fake_platform, order)
    fake_platform.correct_refund(6, [refund_line(item="25.00")])  # still above 24.00
    refund = _round(fake_platform, order)
    assert (refund.status, refund.pause_count, refund.version) == ("PAUSED", 2, 2)
    assert "25.00" in refund.errors[0]["message"]
    assert not RefundLedgerEntry.objects.exists()
    fake_platform.correct_refund(6, [refund_line(item="24.00")])
    refund = _round(fake_platform, order)
    assert (refund.status, refund.pause_count, refund.version) == ("COMPLETE", 2, 3)
    assert [e.amount for e in RefundLedgerEntry.objects.all()] == [Decimal("24.00")]
    # one errors call per version, each its own step
    steps = PlatformStep.objects.filter(kind="report_refund").order_by("version")
    assert [(s.version, s.status) for s in steps] == [(1, "done"), (2, "done")]


def test_a_refund_never_corrected_stays_paused_and_unpaid(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    fake_platform.add_refund(8, order.mp_order_number, OVER)
    for _ in range(3):
        refund = _round(fake_platform, order)
    assert (refund.status, refund.pause_count) == ("PAUSED", 1)
    assert not RefundLedgerEntry.objects.exists()
    assert fake_platform.names().count("post_refund_errors") == 1


def test_a_retried_errors_call_already_applied_is_not_sent_again(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    """The first errors call timed out after the platform acted: the retry re-reads, finds
    the refund PAUSED on the lines it judged, and counts it done without sending."""
    order = shipped_order()
    fake_platform.add_refund(9, order.mp_order_number, OVER)
    seller_returns_pull(seller_id=order.seller_id)
    body = PlatformStep.objects.get(kind="report_refund").body
    fake_platform.post_refund_errors(order.mp_order_number, "9", body)  # it went through
    fake_platform.calls.clear()
    return_steps_drain()
    step = PlatformStep.objects.get(kind="report_refund")
    assert step.status == "done"
    assert fake_platform.names() == ["get_refund"]
    refund = SellerRefund.objects.get()
    assert (refund.status, refund.pause_count) == ("PAUSED", 1)


def test_an_errors_call_for_lines_the_seller_changed_is_dropped_and_the_new_lines_decided(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    fake_platform.add_refund(10, order.mp_order_number, OVER)
    seller_returns_pull(seller_id=order.seller_id)  # refused, its errors call queued
    # The platform already holds other lines (the first call went through, its answer
    # was lost, and the seller corrected the refund before our retry)
    fake_platform.refunds["10"]["merchant_refund_lines"] = FITS
    fake_platform.calls.clear()
    return_steps_drain()
    step = PlatformStep.objects.get(kind="report_refund")
    assert step.status == "superseded"
    assert "changed the refund's lines" in step.last_error
    assert fake_platform.names() == ["get_refund"]  # no errors sent for the new lines
    refund = SellerRefund.objects.get()
    assert (refund.decision, refund.status) == ("", "CREATED")
    # The next pull decides the current lines: accepted, paid once, completed
    refund = _round(fake_platform, order)
    assert (refund.decision, refund.status) == ("accepted", "COMPLETE")
    assert [e.amount for e in RefundLedgerEntry.objects.all()] == [Decimal("21.50")]
    assert fake_platform.refunds["10"]["status"] == "COMPLETE"
    assert fake_platform.refunds["10"]["errors"] == []


def test_an_errors_call_for_a_refund_no_longer_created_is_dropped(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    fake_platform.add_refund(11, order.mp_order_number, OVER)
    seller_returns_pull(seller_id=order.seller_id)
    fake_platform.refunds["11"]["status"] = "COMPLETE"  # someone else finished it
    return_steps_drain()
    step = PlatformStep.objects.get(kind="report_refund")
    assert (step.status, "COMPLETE" in step.last_error) == ("superseded", True)
    assert "post_refund_errors" not in fake_platform.names()
