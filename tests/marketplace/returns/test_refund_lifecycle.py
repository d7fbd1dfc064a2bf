"""The refund lifecycle (CREATED → PAUSED by our errors → CREATED again, corrected →
decided from scratch → COMPLETE) against the real sandbox over HTTP, each step run here
in turn (pull, then the outbox) rather than by a worker; the worker's version is
test_refund_lifecycle_end_to_end.py. The seller corrects refunds through the sandbox's
control API (its v2 page's "resolve"). No sandbox violation in any test (errors sent on a
corrected refund is one)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from marketplace.orders.services.push import order_push
from marketplace.platform.models import PlatformCall
from marketplace.returns.models import PlatformStep, RefundLedgerEntry, SellerRefund
from marketplace.returns.services.steps import return_steps_drain
from marketplace.sync.pull import seller_after_sale_pull, seller_pull
from sellers.models import PlatformConnection
from sellers.token_source import order_client_for
from tests.marketplace.conftest import make_order
from tests.marketplace.returns.conftest import FakeOrderSource, refund_line, shipped_order
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.django_db


@pytest.fixture
def shipped(
    platform: Platform, connected_seller: Any, quiet_broker: Any, wakes: list[str]
) -> Iterator[str]:
    """An order at the platform, shipped and pulled back (paid: line 1 43.00, line 2
    9.99); the steps' wake-ups recorded, not sent (this test drains). Afterwards: no
    sandbox violation."""
    order = make_order("MP-LC-1")
    assert order_push(order_id=order.id) == "synced"
    platform.sandbox.ship(order.mp_order_number)
    assert seller_pull(seller_id=connected_seller.id).orders.error == ""
    yield order.mp_order_number
    violations = platform.sandbox.violations()
    assert violations["total"] == 0, violations


def _line(number: str, **amounts: str) -> dict[str, Any]:
    return {"mp_line_number": number, "refund_quantity": 1, "currency": "EUR", **amounts}


def _round(seller_id: int) -> None:
    """A pull, then the outbox (each decision's call), as a worker would."""
    assert seller_after_sale_pull(seller_id=seller_id).error == ""
    PlatformStep.objects.exclude(status__in=["done", "failed", "superseded"]).update(
        next_attempt_at=timezone.now()
    )
    return_steps_drain()


def _at_platform(platform: Platform, refund_id: int) -> dict[str, Any]:
    rows = platform.sandbox.control("GET", "/refunds")["refunds"]
    return next(r for r in rows if r["feedamp_refund_id"] == refund_id)


def _calls(path_part: str) -> list[str]:
    return [
        f"{c.method} {c.path}" for c in PlatformCall.objects.order_by("id") if path_part in c.path
    ]


def test_an_over_refund_is_paused_then_the_corrected_one_is_decided_again_and_paid_once(
    platform: Platform, connected_seller: Any, shipped: str
) -> None:
    posted = platform.sandbox.seller_refund(shipped, _line("2", item_refund="12.00"))
    refund_id = posted["feedamp_refund_id"]
    _round(connected_seller.id)
    # Paused with EXCESS_ITEM_REFUND, nothing paid
    at = _at_platform(platform, refund_id)
    assert at["status"] == "PAUSED"
    assert [e["code"] for e in at["errors"]] == ["EXCESS_ITEM_REFUND"]
    refund = SellerRefund.objects.get()
    assert (refund.status, refund.decision, refund.pause_count) == ("PAUSED", "refused", 1)
    assert refund.paused_at is not None
    assert not RefundLedgerEntry.objects.exists()
    # A paused refund is not listed: the next pull decides nothing
    assert seller_after_sale_pull(seller_id=connected_seller.id).decided == 0
    # The seller corrects it: CREATED again, same id, new lines; decided from scratch
    platform.sandbox.refund_resolve(refund_id, refund_lines=[_line("2", item_refund="9.00")])
    _round(connected_seller.id)
    refund.refresh_from_db()
    assert (refund.status, refund.decision, refund.version) == ("COMPLETE", "accepted", 2)
    assert _at_platform(platform, refund_id)["status"] == "COMPLETE"
    assert list(RefundLedgerEntry.objects.values_list("amount", flat=True)) == [Decimal("9.00")]
    # More pulls pay nothing more, and one errors call was ever sent
    _round(connected_seller.id)
    assert RefundLedgerEntry.objects.count() == 1
    assert len([c for c in _calls(f"/refunds/{refund_id}/") if c.endswith("/errors")]) == 1


def test_a_refund_corrected_still_over_the_line_is_paused_again_then_paid(
    platform: Platform, connected_seller: Any, shipped: str
) -> None:
    refund_id = platform.sandbox.seller_refund(shipped, _line("1", item_refund="45.00"))[
        "feedamp_refund_id"
    ]
    _round(connected_seller.id)
    platform.sandbox.refund_resolve(refund_id, refund_lines=[_line("1", item_refund="44.00")])
    _round(connected_seller.id)
    refund = SellerRefund.objects.get()
    assert (refund.status, refund.pause_count, refund.version) == ("PAUSED", 2, 2)
    assert "44.00" in refund.errors[0]["message"]
    assert not RefundLedgerEntry.objects.exists()
    platform.sandbox.refund_resolve(refund_id, fit=True)
    _round(connected_seller.id)
    refund.refresh_from_db()
    assert (refund.status, refund.pause_count, refund.version) == ("COMPLETE", 2, 3)
    assert [e.amount for e in RefundLedgerEntry.objects.all()] == [Decimal("43.00")]
    # one errors call per version, each its own step
    steps = PlatformStep.objects.filter(kind="report_refund").order_by("version")
    assert [(s.version, s.status) for s in steps] == [(1, "done"), (2, "done")]


def test_a_refund_never_corrected_stays_paused_and_unpaid(
    platform: Platform, connected_seller: Any, shipped: str
) -> None:
    platform.sandbox.seller_refund(shipped, _line("2", item_refund="20.00"))
    for _ in range(3):
        _round(connected_seller.id)
    refund = SellerRefund.objects.get()
    assert (refund.status, refund.pause_count, refund.decision) == ("PAUSED", 1, "refused")
    assert not RefundLedgerEntry.objects.exists()
    assert len([c for c in _calls("/refunds/") if c.endswith("/errors")]) == 1


def test_a_retried_errors_call_already_applied_is_not_sent_again(
    platform: Platform, connected_seller: Any, shipped: str
) -> None:
    """The first errors call went through but its answer was lost: the retry re-reads,
    finds the refund PAUSED on the lines it judged, and counts it done without sending."""
    refund_id = platform.sandbox.seller_refund(shipped, _line("2", item_refund="20.00"))[
        "feedamp_refund_id"
    ]
    assert seller_after_sale_pull(seller_id=connected_seller.id).decided == 1
    step = PlatformStep.objects.get(kind="report_refund")
    client = order_client_for(PlatformConnection.objects.get(seller=connected_seller))
    client.post_refund_errors(shipped, refund_id, list(step.body))  # "lost" answer
    sent = len(_calls("/errors"))
    return_steps_drain()
    step.refresh_from_db()
    assert step.status == "done"
    assert len(_calls("/errors")) == sent  # only the re-read went out
    refund = SellerRefund.objects.get()
    assert (refund.status, refund.pause_count) == ("PAUSED", 1)


def test_an_errors_call_for_a_refund_the_seller_corrected_meanwhile_is_dropped(
    platform: Platform, connected_seller: Any, shipped: str
) -> None:
    """TRAPS.md's race: the errors call timed out after the platform acted, the seller
    corrected the refund; the retry re-reads, finds other lines, sends nothing, and the
    corrected version is decided on its own (accepted here)."""
    refund_id = platform.sandbox.seller_refund(shipped, _line("2", item_refund="20.00"))[
        "feedamp_refund_id"
    ]
    seller_after_sale_pull(seller_id=connected_seller.id)
    step = PlatformStep.objects.get(kind="report_refund")
    client = order_client_for(PlatformConnection.objects.get(seller=connected_seller))
    client.post_refund_errors(shipped, refund_id, list(step.body))  # "timed out"
    platform.sandbox.refund_resolve(refund_id, refund_lines=[_line("2", item_refund="5.00")])
    return_steps_drain()
    step.refresh_from_db()
    assert step.status == "superseded"
    assert "changed the refund's lines" in step.last_error
    assert _at_platform(platform, refund_id)["status"] == "CREATED"  # not paused again
    _round(connected_seller.id)
    refund = SellerRefund.objects.get()
    assert (refund.decision, refund.status) == ("accepted", "COMPLETE")
    assert [e.amount for e in RefundLedgerEntry.objects.all()] == [Decimal("5.00")]


def test_an_errors_call_for_a_refund_no_longer_created_is_dropped(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    """A state the sandbox cannot reach by itself (completed by someone else): in memory."""
    order = shipped_order()
    fake_platform.add_refund(11, order.mp_order_number, [refund_line(item="30.00")])
    seller_after_sale_pull(seller_id=order.seller_id)
    fake_platform.refunds["11"]["status"] = "COMPLETE"
    return_steps_drain()
    step = PlatformStep.objects.get(kind="report_refund")
    assert step.status == "superseded"
    assert "COMPLETE" in step.last_error
    assert "post_refund_errors" not in fake_platform.names()


def test_a_returns_errors_call_for_amounts_the_seller_changed_is_dropped_and_decided_again(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    """A return's errors belong to the refund amounts they judged, too."""
    from marketplace.returns.intake_schema import ReturnIn
    from marketplace.returns.models import Return
    from marketplace.returns.services.intake import return_create

    order = shipped_order()
    data = ReturnIn.model_validate(
        {"mp_return_number": "R1", "reason": "x", "return_lines": [
            {"mp_line_number": "1", "quantity": 1}]}
    )  # fmt: skip
    return_create(mp_order_number=order.mp_order_number, data=data)
    return_steps_drain()  # pushed
    number = order.mp_order_number
    fake_platform.set_return(number, "R1", "REFUNDED")
    over = {
        "mp_return_line_number": "1",
        "principal_refund_amount": 30,
        "shipping_refund_amount": 0,
    }
    fake_platform.return_refunds[(number, "R1")] = [over]
    seller_after_sale_pull(seller_id=order.seller_id)
    assert Return.objects.get().decision == "refused"  # 30.00 > 24.00: errors queued
    # Before our errors call goes, the seller's amounts change
    fake_platform.return_refunds[(number, "R1")] = [{**over, "principal_refund_amount": 20}]
    return_steps_drain()
    step = PlatformStep.objects.get(kind="report_return")
    assert step.status == "superseded"
    assert "post_return_errors" not in fake_platform.names()
    assert Return.objects.get().decision == ""
    # The next pull reads it again (its own GET) and decides the current amounts
    seller_after_sale_pull(seller_id=order.seller_id)
    ret = Return.objects.get()
    assert ret.decision == "accepted"
    assert RefundLedgerEntry.objects.get(return_request=ret).amount == Decimal("20.00")
