"""Each seller's pull schedule: pulled often while work is open, backing off while idle,
back at the next tick when an order is placed; a fan-out whose cost follows the sellers
due; a connect started by the tick."""

from __future__ import annotations

import re
import threading
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from marketplace.sync.fan_out import sellers_pull_fan_out
from marketplace.sync.models import SellerSync
from marketplace.sync.pull import seller_pull
from marketplace.sync.pull_now import seller_pull_queue
from marketplace.sync.schedule import (
    REASON_OPEN_WORK,
    open_work_reasons,
    schedule_after_pull,
    schedule_claim_due,
)
from sellers.models import PlatformConnection, Seller
from tests.marketplace.conftest import BrokerRecorder, make_order
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.django_db

INTERVAL = 90.0
CEILING = 1000.0


@pytest.fixture(autouse=True)
def _schedule_settings(settings: Any) -> None:
    settings.PULL_INTERVAL_SECONDS = INTERVAL
    settings.PULL_IDLE_CEILING_SECONDS = CEILING
    settings.PULL_FAILURE_CEILING_SECONDS = 600.0
    settings.PULL_LEASE_SECONDS = 300.0


def schedule_of(seller: Seller) -> SellerSync:
    return SellerSync.objects.get(seller=seller)


def wait_of(schedule: SellerSync, since: datetime) -> float:
    assert schedule.next_pull_at is not None
    return (schedule.next_pull_at - since).total_seconds()


def sellers_with_schedules(count: int, *, due: int) -> list[int]:
    """``count`` sellers with a schedule row; the first ``due`` are due (oldest first)."""
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"pop-{count}-{i}", password="!") for i in range(count)
    )
    sellers = Seller.objects.bulk_create(
        Seller(user=user, display_name=f"pop {i}") for i, user in enumerate(users)
    )
    now = timezone.now()
    SellerSync.objects.bulk_create(
        SellerSync(
            seller=seller,
            next_pull_at=now - timedelta(seconds=due - i) if i < due else now + timedelta(hours=1),
            reason="idle",
        )
        for i, seller in enumerate(sellers)
    )
    return [s.id for s in sellers[:due]]


# --- backing off and coming back ------------------------------------------------------


def test_the_tick_after_a_connect_starts_the_sync_and_queues_the_first_pull(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder
) -> None:
    # The connect itself writes nothing of the sync's (sellers sit below it)
    assert not SellerSync.objects.filter(seller=connected_seller).exists()
    # The next beat tick starts it: due now, so queued in the same tick
    assert sellers_pull_fan_out() == [connected_seller.id]
    schedule = schedule_of(connected_seller)
    assert schedule.reason == "connected"
    assert schedule.started_at is not None
    assert schedule.is_queued
    # And it is started once: the next tick leaves it to its lease
    assert sellers_pull_fan_out() == []
    assert schedule_of(connected_seller).started_at == schedule.started_at


def test_an_idle_sellers_pulls_back_off_to_the_ceiling_and_come_back_when_an_order_is_placed(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder
) -> None:
    # Given a connected seller with nothing open, pulled again and again
    waits = []
    for step in range(1, 6):
        before = timezone.now()
        result = seller_pull(seller_id=connected_seller.id).orders
        assert result.ran
        assert not result.error
        schedule = schedule_of(connected_seller)
        waits.append(wait_of(schedule, before))
        assert schedule.idle_steps == step
        assert schedule.reason.startswith(f"idle — backing off (step {step}")
    # Then each wait doubles (±10 % jitter) until the ceiling holds it
    nominal = [180, 360, 720, CEILING, CEILING]
    for got, expected in zip(waits, nominal, strict=True):
        assert expected * 0.89 <= got <= expected * 1.11 + 1
    assert "at the ceiling" in schedule_of(connected_seller).reason

    # When an order is placed for them
    placed_at = timezone.now()
    make_order("MP-BACK")
    # Then the next beat tick brings their next pull within one interval, and says why
    assert sellers_pull_fan_out() == []
    schedule = schedule_of(connected_seller)
    assert wait_of(schedule, placed_at) <= INTERVAL + 1
    assert (schedule.reason, schedule.idle_steps) == (REASON_OPEN_WORK, 0)

    # And while the order is open, every pull keeps the short interval
    before = timezone.now()
    seller_pull(seller_id=connected_seller.id)
    schedule = schedule_of(connected_seller)
    assert INTERVAL - 1 <= wait_of(schedule, before) <= INTERVAL + 1
    assert schedule.reason == "open orders"
    assert open_work_reasons(seller_id=connected_seller.id) == ["open orders"]


def test_a_busy_sellers_schedule_is_not_written_by_each_new_order(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder
) -> None:
    make_order("MP-BUSY-1")
    seller_pull(seller_id=connected_seller.id)
    first = schedule_of(connected_seller)
    make_order("MP-BUSY-2")
    sellers_pull_fan_out()
    again = schedule_of(connected_seller)
    assert (again.next_pull_at, again.updated_at, again.reason) == (
        first.next_pull_at,
        first.updated_at,
        "open orders",
    )


def test_a_failing_pull_backs_off_bounded_and_shows_why(seller: Seller) -> None:
    sync = SellerSync.objects.create(seller=seller, next_pull_at=timezone.now())
    waits = []
    for _ in range(5):
        now = timezone.now()
        sync.consecutive_failures += 1  # as the pull's record counts it
        schedule_after_pull(sync=sync, failed=True, now=now)
        waits.append(wait_of(sync, now))
    assert waits == [90, 180, 360, 600, 600]
    assert sync.reason == "failing — retry 5"
    # A pull that works again: back to what the seller's work says
    sync.consecutive_failures = 0
    schedule_after_pull(sync=sync, reasons=["open orders"], now=timezone.now())
    assert sync.reason == "open orders"


def test_a_pull_of_a_seller_no_longer_connected_takes_them_off_the_schedule(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder
) -> None:
    assert sellers_pull_fan_out() == [connected_seller.id]  # started, its pull queued
    PlatformConnection.objects.filter(seller=connected_seller).update(state="needs_reauth")
    result = seller_pull(seller_id=connected_seller.id).orders
    assert result.error == "not connected"
    schedule = schedule_of(connected_seller)
    assert (schedule.next_pull_at, schedule.reason) == (None, "not connected")
    # An order placed meanwhile does not schedule a pull that cannot run
    make_order("MP-OFF")
    sellers_pull_fan_out()
    assert schedule_of(connected_seller).next_pull_at is None
    # A reconnect does, at the next tick
    platform.reconnect(connected_seller)
    assert schedule_of(connected_seller).next_pull_at is None
    assert sellers_pull_fan_out() == [connected_seller.id]
    schedule = schedule_of(connected_seller)
    assert (schedule.is_queued, schedule.reason) == (True, "connected")


# --- the fan-out ----------------------------------------------------------------------


@pytest.mark.parametrize("population", [50, 500])
def test_the_fan_out_costs_one_query_per_batch_whatever_the_population(
    population: int, quiet_broker: BrokerRecorder
) -> None:
    # Given 30 sellers due among a population of 50 or 500
    due = sellers_with_schedules(population, due=30)
    # When beat fans out in batches of 10
    with CaptureQueriesContext(connection) as captured:
        queued = sellers_pull_fan_out(batch=10)
    # Then only the due sellers are queued, oldest due first, and each batch is one
    # statement (three full batches and one that finds the rest empty)
    assert queued == due
    claims = [q["sql"] for q in captured.captured_queries if "FOR UPDATE SKIP LOCKED" in q["sql"]]
    assert len(claims) == 4
    assert not [q for q in captured.captured_queries if "sellers_seller" in q["sql"]]
    # And they now hold a lease: the next beat queues none of them again
    assert sellers_pull_fan_out(batch=10) == []


def test_a_tick_claims_at_most_its_batches_and_leaves_the_rest_due(
    quiet_broker: BrokerRecorder,
) -> None:
    due = sellers_with_schedules(40, due=25)
    assert sellers_pull_fan_out(batch=10, max_batches=2) == due[:20]
    assert sellers_pull_fan_out(batch=10, max_batches=2) == due[20:]


def test_a_lost_pull_message_is_sent_again_when_its_lease_runs_out(
    quiet_broker: BrokerRecorder,
) -> None:
    due = sellers_with_schedules(3, due=1)
    now = timezone.now()
    assert schedule_claim_due(limit=10, now=now) == due
    assert schedule_claim_due(limit=10, now=now + timedelta(seconds=299)) == []
    assert schedule_claim_due(limit=10, now=now + timedelta(seconds=301)) == due


@pytest.mark.django_db(transaction=True)
def test_two_beats_at_once_never_queue_the_same_seller_twice() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("row locks need Postgres")
    due = sellers_with_schedules(20, due=20)
    claimed: list[list[int]] = []
    started, release = threading.Event(), threading.Event()

    def other_beat() -> None:
        try:
            with transaction.atomic():
                # A beat that claimed the 5 oldest and has not committed yet
                rows = list(
                    SellerSync.objects.select_for_update()
                    .filter(seller_id__in=due[:5])
                    .values_list("seller_id", flat=True)
                )
                claimed.append(rows)
                started.set()
                release.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_beat)
    thread.start()
    try:
        assert started.wait(10)
        # This beat skips the locked rows instead of waiting for them or taking them
        assert schedule_claim_due(limit=50) == due[5:]
    finally:
        release.set()
        thread.join()
    assert claimed == [due[:5]]


# --- Pull now and the pages -----------------------------------------------------------


def test_pull_now_queues_at_once_and_the_next_beat_does_not_queue_it_again(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder
) -> None:
    seller_pull(seller_id=connected_seller.id)  # idle: backed off
    queued = seller_pull_queue(seller=connected_seller)
    assert queued.ok
    schedule = schedule_of(connected_seller)
    assert schedule.reason == "pull now"
    assert schedule.is_queued
    assert sellers_pull_fan_out() == []


def test_staff_see_each_sellers_next_pull_and_why(
    client: Any, platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder
) -> None:
    staff = get_user_model().objects.create_user("staff-pulls", password="x", is_staff=True)
    client.force_login(staff)
    seller_pull(seller_id=connected_seller.id)
    detail = client.get(reverse("dashboard:seller", args=[connected_seller.id])).content.decode()
    assert re.search(r'id="next-pull">in [23] min<', detail)  # 180 s ± 10 %
    assert "idle — backing off (step 1)" in detail
    listing = client.get(reverse("dashboard:sellers")).content.decode()
    assert "next pull in" in listing
    assert "idle — backing off (step 1)" in listing
