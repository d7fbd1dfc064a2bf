"""``manage.py reconcile`` (a pass now, its findings printed) and the daily schedule
(each seller with open work once a day, spread by slot; a missed tick made up)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from marketplace.orders.services.push import order_push
from marketplace.reconcile import schedule
from marketplace.reconcile.models import ReconcileRun
from marketplace.reconcile.schedule import last_slot_time, seller_slot, sellers_due
from tests.marketplace.conftest import make_order
from tests.support.app_fixtures import Platform
from tests.support.factories import PlatformConnectionFactory, SellerFactory

pytestmark = pytest.mark.django_db


def run_command(*args: str) -> str:
    out = StringIO()
    call_command("reconcile", *args, stdout=out)
    return out.getvalue()


def test_the_command_reconciles_a_seller_and_prints_the_findings(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    order = make_order("MP-CMD")
    assert order_push(order_id=order.id) == "synced"
    platform.sandbox.control(
        "POST", "/orders/MP-CMD/drift", {"kind": "order_state", "marketplace_state": "CANCELLED"}
    )
    out = run_command("--seller", connected_seller.user.username)
    assert f"seller {connected_seller.id}: 1 orders; 2 platform call(s); 1 finding(s)" in out
    assert (
        "  Order state differs (both sides moved) · order MP-CMD · Left to staff: "
        "the platform holds a state we did not send: both sides moved"
    ) in out
    assert out.rstrip().endswith("1 seller(s) reconciled, 0 with an error")
    # by id, and --all (the sellers with open work)
    assert f"seller {connected_seller.id}: 1 orders" in run_command(
        "--seller", str(connected_seller.id)
    )
    assert "1 seller(s) reconciled" in run_command("--all")
    assert ReconcileRun.objects.filter(trigger="command").count() == 3


def test_the_command_needs_a_seller_or_all(db: Any) -> None:
    with pytest.raises(CommandError, match="name a seller"):
        run_command()
    with pytest.raises(CommandError, match="no such seller"):
        run_command("--seller", "nobody")


def test_each_seller_has_one_slot_a_day_spread_over_it() -> None:
    slots = {seller_slot(seller_id) for seller_id in range(1, 2001)}
    assert all(0 <= slot < 86400 for slot in slots)
    assert len(slots) > 1900  # spread, not bunched
    # every hour of the day gets some sellers
    assert {slot // 3600 for slot in slots} == set(range(24))
    now = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    assert now - timedelta(days=1) < last_slot_time(7, now) <= now


def test_the_tick_takes_sellers_whose_slot_fell_in_the_lookback_once(
    settings: Any, quiet_broker: Any
) -> None:
    settings.RECONCILE_LOOKBACK_SECONDS = 3600
    seller = SellerFactory(username="slotted")
    PlatformConnectionFactory(seller=seller)
    make_order("MP-SLOT", seller="slotted")
    idle = SellerFactory(username="idle")  # connected, nothing open
    PlatformConnectionFactory(seller=idle)
    slot = last_slot_time(seller.id, datetime(2026, 11, 27, 12, 0, tzinfo=UTC))
    # Not yet: its slot is still ahead
    assert sellers_due(now=slot - timedelta(seconds=1)) == []
    # At its slot, and for the lookback after (a missed tick): due
    assert sellers_due(now=slot) == [seller.id]
    assert sellers_due(now=slot + timedelta(minutes=50)) == [seller.id]
    # Past the lookback: it waits for tomorrow's slot
    assert sellers_due(now=slot + timedelta(minutes=70)) == []
    # Once passed since the slot, it is not taken again by the next ticks
    run = ReconcileRun.objects.create(seller=seller, trigger="schedule")
    ReconcileRun.objects.filter(pk=run.pk).update(started_at=slot + timedelta(minutes=1))
    assert sellers_due(now=slot + timedelta(minutes=10)) == []
    # A skipped pass (a pull held the lease) is tried again
    ReconcileRun.objects.filter(pk=run.pk).update(error="skipped: a pull was running")
    assert sellers_due(now=slot + timedelta(minutes=10)) == [seller.id]


def test_the_tick_queues_one_pass_per_seller_due(
    monkeypatch: pytest.MonkeyPatch, quiet_broker: Any
) -> None:
    seller = SellerFactory(username="ticked")
    PlatformConnectionFactory(seller=seller)
    make_order("MP-TICK", seller="ticked")
    queued: list[tuple[str, tuple[Any, ...]]] = []
    monkeypatch.setattr(schedule, "task_enqueue", lambda name, *args: queued.append((name, args)))
    slot = last_slot_time(seller.id, datetime(2026, 11, 27, 12, 0, tzinfo=UTC))
    assert schedule.reconcile_tick(now=slot) == [seller.id]
    assert queued == [(schedule.SELLER_RECONCILE_TASK, (seller.id,))]
