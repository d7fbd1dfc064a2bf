"""The returns outbox: a return is pushed after its order, nothing lost, 429 honoured,
bounded retries then a dead letter staff can retry; a lost answer to "complete" is sent
again and pays nothing twice."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.orders.models import OrderSync
from marketplace.platform.errors import PlatformRateLimited, PlatformRejected, PlatformUnavailable
from marketplace.returns.intake_schema import ReturnIn
from marketplace.returns.models import PlatformStep, RefundLedgerEntry, SellerRefund
from marketplace.returns.services.intake import return_create
from marketplace.returns.services.steps import return_steps_drain, step_retry
from marketplace.sync.pull import seller_after_sale_pull
from tests.marketplace.returns.conftest import FakeOrderSource, refund_line, shipped_order

pytestmark = pytest.mark.django_db


def make_return(order: Any, number: str = "RET-1") -> Any:
    data = ReturnIn.model_validate(
        {
            "mp_return_number": number,
            "reason": "broken",
            "return_lines": [{"mp_line_number": "1", "quantity": 1}],
        }
    )
    return return_create(mp_order_number=order.mp_order_number, data=data)[0]


def due_now() -> None:
    PlatformStep.objects.exclude(status__in=["done", "failed"]).update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)
    )


def test_a_return_is_pushed_only_once_its_order_is_on_the_platform(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    # Given a return of an order whose push has not succeeded yet
    order = shipped_order(pushed=False)
    make_return(order)
    # When the outbox runs, nothing is sent and the step waits (no failure counted)
    return_steps_drain()
    step = PlatformStep.objects.get()
    assert fake_platform.names() == []
    assert (step.status, step.failures) == ("pending", 0)
    assert step.next_attempt_at > timezone.now()
    # Once the order is on the platform, the return follows
    OrderSync.objects.filter(order=order).update(pushed_version=1)
    due_now()
    return_steps_drain()
    assert fake_platform.names() == ["put_return"]
    _, (number, ret, payload) = fake_platform.calls[0]
    assert (number, ret) == (order.mp_order_number, "RET-1")
    line = payload["return_lines"][0]
    assert line["mp_order_line_number"] == "1"
    assert line["requested_refund_principal"] == 9.7
    assert line["sku"] == "SKU-1"
    assert line["currency"] == "EUR"
    assert line["unit_price"] == 10.0
    assert PlatformStep.objects.get().status == "done"


def test_a_429_waits_as_told_without_counting_a_failure(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    make_return(order)
    fake_platform.fail["put_return"] = [PlatformRateLimited("slow down", status=429, retry_after=7)]
    return_steps_drain()
    step = PlatformStep.objects.get()
    assert (step.status, step.failures) == ("retrying", 0)
    wait = (step.next_attempt_at - timezone.now()).total_seconds()
    assert 5 < wait <= 7
    return_steps_drain()  # not due yet: nothing sent
    assert fake_platform.names() == ["put_return"]


def test_transient_failures_back_off_then_dead_letter_and_staff_retry(
    fake_platform: FakeOrderSource, wakes: list[str], settings: Any
) -> None:
    settings.RETURN_STEP_MAX_FAILURES = 3
    order = shipped_order()
    make_return(order)
    fake_platform.fail["put_return"] = [PlatformUnavailable("down", status=503)] * 3
    for _ in range(3):
        due_now()
        return_steps_drain()
    step = PlatformStep.objects.get()
    assert (step.status, step.failures, step.next_attempt_at) == ("failed", 3, None)
    assert "down" in step.last_error
    assert step_retry(step_id=step.pk)
    return_steps_drain()
    assert PlatformStep.objects.get().status == "done"


def test_a_refused_call_is_a_dead_letter_at_once(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    make_return(order)
    fake_platform.fail["put_return"] = [PlatformRejected("bad line", status=400)]
    return_steps_drain()
    assert PlatformStep.objects.get().status == "failed"


def test_a_lost_answer_to_complete_is_sent_again_and_pays_nothing_twice(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    # Given a seller refund within the line's cost
    order = shipped_order()
    fake_platform.add_refund(41, order.mp_order_number, [refund_line(item="5.00")])
    seller_after_sale_pull(seller_id=order.seller_id)
    assert RefundLedgerEntry.objects.count() == 1
    # When the answer to "complete" is lost (a timeout after the platform acted)
    fake_platform.fail["complete_refund"] = [PlatformUnavailable("read timeout")]
    return_steps_drain()
    assert PlatformStep.objects.get().status == "retrying"
    # and the refund is listed again meanwhile (the overlap) and the step retried
    seller_after_sale_pull(seller_id=order.seller_id)
    due_now()
    return_steps_drain()
    # Then it is complete, with one ledger row and two complete calls
    assert fake_platform.names().count("complete_refund") == 2
    assert PlatformStep.objects.get().status == "done"
    assert SellerRefund.objects.get().status == "COMPLETE"
    assert RefundLedgerEntry.objects.count() == 1


def test_a_crashed_drain_leaves_its_claim_to_expire_and_the_step_runs_again(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    make_return(order)
    # A worker claimed the step and died before recording (the lease is left)
    PlatformStep.objects.update(
        claim_token="dead", lease_until=timezone.now() + timedelta(minutes=1)
    )
    return_steps_drain()
    assert fake_platform.names() == []
    PlatformStep.objects.update(lease_until=timezone.now() - timedelta(seconds=1))
    return_steps_drain()
    assert fake_platform.names() == ["put_return"]
    assert PlatformStep.objects.get().status == "done"
