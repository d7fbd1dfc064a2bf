"""The returns/refunds pull follows change, not history."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from marketplace.returns.intake_schema import ReturnIn
from marketplace.returns.models import RefundLedgerEntry, Return, SellerRefund
from marketplace.returns.selectors import (
    seller_has_open_returns_or_refunds,
    sellers_with_open_returns_or_refunds,
)
from marketplace.returns.services.intake import return_create
from marketplace.returns.services.steps import return_steps_drain
from marketplace.sync.models import SellerSync
from marketplace.sync.pull import seller_after_sale_pull
from tests.marketplace.returns.conftest import FakeOrderSource, refund_line, shipped_order
from tests.support.factories import OrderFactory, PlatformConnectionFactory, SellerFactory

pytestmark = pytest.mark.django_db


def test_a_seller_with_nothing_open_is_not_listed(fake_platform: FakeOrderSource) -> None:
    seller = SellerFactory()
    PlatformConnectionFactory(seller=seller)
    OrderFactory(seller=seller, state="PENDING")
    assert not seller_has_open_returns_or_refunds(seller_id=seller.pk)
    assert seller not in sellers_with_open_returns_or_refunds()
    result = seller_after_sale_pull(seller_id=seller.pk)
    assert (result.ran, result.requests, fake_platform.calls) == (False, 0, [])


def _requests_for(fake: FakeOrderSource, seller_id: int) -> int:
    before = len(fake.calls)
    seller_after_sale_pull(seller_id=seller_id)
    return len([n for n, _ in fake.calls[before:] if n.startswith("list_")])


def test_many_completed_refunds_cost_the_same_requests_as_few(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    small, large = shipped_order(number="SMALL"), shipped_order(number="LARGE")
    small.lines.update(quantity=1000, unit_price=Decimal("1000"))
    large.lines.update(quantity=1000, unit_price=Decimal("1000"))
    refund_id = 1
    # history: 5 refunds of one seller, 120 of the other, all decided and completed
    for order, count in ((small, 5), (large, 120)):
        for _ in range(count):
            fake_platform.add_refund(refund_id, order.mp_order_number, [refund_line(item="1.00")])
            refund_id += 1
        seller_after_sale_pull(seller_id=order.seller_id)
        return_steps_drain()
    assert SellerRefund.objects.filter(status="COMPLETE").count() == 125
    # now 3 new refunds each
    for order in (small, large):
        for _ in range(3):
            fake_platform.add_refund(refund_id, order.mp_order_number, [refund_line(item="1.00")])
            refund_id += 1
    assert _requests_for(fake_platform, small.seller_id) == _requests_for(
        fake_platform, large.seller_id
    )
    # and a pull with nothing new reads nothing it has seen (one empty listing)
    calls_before = len(fake_platform.calls)
    return_steps_drain()
    result = seller_after_sale_pull(seller_id=large.seller_id)
    assert result.changed == 0
    assert result.decided == 0
    listed = [c for c in fake_platform.calls[calls_before:] if c[0] == "list_refunds"]
    assert len(listed) == 1
    # the reference's filter only: the open set, no update time, no "status"
    assert listed[0][1]["refund_status"] == ["CREATED"]
    assert set(listed[0][1]) == {"refund_status", "page_size", "cursor"}


def test_a_repeated_listing_decides_and_pays_once(
    fake_platform: FakeOrderSource, wakes: list[str], settings: Any
) -> None:
    order = shipped_order()
    fake_platform.add_refund(7, order.mp_order_number, [refund_line(item="5.00")])
    seller_after_sale_pull(seller_id=order.seller_id)
    # listed again before our "complete" went through: still CREATED at the platform
    seller_after_sale_pull(seller_id=order.seller_id)
    assert RefundLedgerEntry.objects.count() == 1
    assert fake_platform.names().count("list_refunds") == 2


def test_the_returns_listing_never_asks_for_a_rejected_state(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    data = ReturnIn.model_validate(
        {"mp_return_number": "R1", "reason": "x", "return_lines": [
            {"mp_line_number": "1", "quantity": 1}]}
    )  # fmt: skip
    return_create(mp_order_number=order.mp_order_number, data=data)
    return_steps_drain()
    result = seller_after_sale_pull(seller_id=order.seller_id)
    assert result.error == ""
    listed = [f for name, f in fake_platform.calls if name == "list_returns"]
    assert listed
    assert all("REJECTED" not in str(f.get("status") or "") for f in listed)
    # the return went out with the body's mp_order_number and a published return_type
    _, (number, _, payload) = fake_platform.calls[0]
    assert (payload["mp_order_number"], payload["return_type"]) == (number, "SHIP")


def test_a_return_is_followed_until_refunded_decided_and_completed(
    fake_platform: FakeOrderSource, wakes: list[str]
) -> None:
    order = shipped_order()
    data = ReturnIn.model_validate(
        {
            "mp_return_number": "R1",
            "reason": "x",
            "return_lines": [{"mp_line_number": "1", "quantity": 1}],
        }
    )
    return_create(mp_order_number=order.mp_order_number, data=data)
    return_steps_drain()  # pushed
    number = order.mp_order_number
    fake_platform.set_return(number, "R1", "AUTHORIZED", rma="RMA-1")
    seller_after_sale_pull(seller_id=order.seller_id)
    assert Return.objects.get().rma == "RMA-1"
    fake_platform.set_return(number, "R1", "REFUNDED")
    fake_platform.return_refunds[(number, "R1")] = [
        {
            "mp_return_line_number": "1",
            "principal_refund_amount": 10.8,
            "shipping_refund_amount": 1.5,
        }
    ]
    seller_after_sale_pull(seller_id=order.seller_id)
    ret = Return.objects.get()
    assert ret.decision == "accepted"
    assert RefundLedgerEntry.objects.get().amount == Decimal("12.30")
    return_steps_drain()
    assert Return.objects.get().status == "COMPLETED"
    # a completed return is no longer open: the next pull does not list returns
    before = fake_platform.names().count("list_returns")
    seller_after_sale_pull(seller_id=order.seller_id)
    assert fake_platform.names().count("list_returns") == before


def test_a_rejected_return_shows_rejected(fake_platform: FakeOrderSource, wakes: list[str]) -> None:
    order = shipped_order()
    data = ReturnIn.model_validate(
        {
            "mp_return_number": "R1",
            "reason": "x",
            "return_lines": [{"mp_line_number": "1", "quantity": 1}],
        }
    )
    return_create(mp_order_number=order.mp_order_number, data=data)
    return_steps_drain()
    fake_platform.set_return(order.mp_order_number, "R1", "REJECTED", notes="used")
    seller_after_sale_pull(seller_id=order.seller_id)
    ret = Return.objects.get()
    assert (ret.status, ret.notes, ret.decision) == ("REJECTED", "used", "")
    assert not RefundLedgerEntry.objects.exists()


def test_the_fan_out_queues_only_connected_sellers_with_something_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from marketplace.sync import fan_out

    queued: list[tuple[str, int]] = []
    monkeypatch.setattr(fan_out, "task_enqueue", lambda name, sid: queued.append((name, sid)))
    active = shipped_order()  # connected, a shipped order
    idle = SellerFactory()
    PlatformConnectionFactory(seller=idle)
    OrderFactory(seller=idle, state="PENDING")
    gone = shipped_order(seller=SellerFactory())  # no connection
    sellers = fan_out.sellers_after_sale_pull_fan_out()
    assert sellers == [active.seller_id]
    assert queued == [(fan_out.SELLER_AFTER_SALE_PULL_TASK, active.seller_id)]
    assert gone.seller_id not in sellers


def test_a_return_placed_brings_a_backed_off_seller_back_at_the_next_tick() -> None:
    from datetime import timedelta

    from django.utils import timezone

    from marketplace.sync.schedule import REASON_OPEN_WORK, open_work_reasons, sync_wake_open_work

    order = shipped_order()
    # Given a seller backed off for hours, nothing open but a shipped order
    later = timezone.now() + timedelta(hours=3)
    SellerSync.objects.update_or_create(
        seller_id=order.seller_id, defaults={"next_pull_at": later, "reason": "idle"}
    )
    assert open_work_reasons(seller_id=order.seller_id) == []
    # When the buyer's return is placed through intake
    data = ReturnIn.model_validate(
        {"mp_return_number": "R-1", "reason": "broken", "return_lines": [
            {"mp_line_number": "1", "quantity": 1}]}
    )  # fmt: skip
    return_create(mp_order_number=order.mp_order_number, data=data)
    # Then the next tick makes the seller due within the short interval: open work
    assert sync_wake_open_work() == 1
    schedule = SellerSync.objects.get(seller_id=order.seller_id)
    assert schedule.next_pull_at < later - timedelta(hours=2)
    assert schedule.reason == REASON_OPEN_WORK
    assert open_work_reasons(seller_id=order.seller_id) == ["open returns"]
    # and a tick later nothing is written again
    assert sync_wake_open_work() == 0


def test_a_seller_with_nothing_returnable_gets_no_after_sale_listing(
    fake_platform: FakeOrderSource,
) -> None:
    seller = SellerFactory()
    PlatformConnectionFactory(seller=seller)
    OrderFactory(seller=seller, state="PENDING")
    result = seller_after_sale_pull(seller_id=seller.pk)
    assert (result.ran, result.requests, result.error) == (False, 0, "")
    assert fake_platform.calls == []
