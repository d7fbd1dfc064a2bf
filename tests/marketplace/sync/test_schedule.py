"""Each seller's pull schedule: pulled often while work is open, backing off while idle,
back at once when an order is placed; a fan-out whose cost follows the sellers due."""

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
from marketplace.sync.pull import seller_pull
from marketplace.orders.services.pull_now import seller_pull_queue
from sellers.models import PlatformConnection, PullSchedule, Seller
from sellers.pull_schedule import (
    REASON_ORDER_PLACED,
    open_work_reasons,
    pull_schedule_after_pull,
    pull_schedule_claim_due,
)
from tests.app_fixtures import Platform
from tests.marketplace.conftest import BrokerRecorder, make_order

pytestmark = pytest.mark.django_db

INTERVAL = 90.0
CEILING = 1000.0


@pytest.fixture(autouse=True)
def _schedule_settings(settings: Any) -> None:
    settings.PULL_INTERVAL_SECONDS = INTERVAL
    settings.PULL_IDLE_CEILING_SECONDS = CEILING
    settings.PULL_FAILURE_CEILING_SECONDS = 600.0
    settings.PULL_LEASE_SECONDS = 300.0


def schedule_of(seller: Seller) -> PullSchedule:
    return PullSchedule.objects.get(seller=seller)


def wait_of(schedule: PullSchedule, since: datetime) -> float:
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
    PullSchedule.objects.bulk_create(
        PullSchedule(
            seller=seller,
            next_pull_at=now - timedelta(seconds=due - i) if i < due else now + timedelta(hours=1),
            reason="idle",
        )
        for i, seller in enumerate(sellers)
    )
    return [s.id for s in sellers[:due]]


# --- backing off and coming back ------------------------------------------------------


def test_connecting_makes_the_first_pull_due_at_once(
    platform: Platform, connected_seller: Any
) -> None:
    schedule = schedule_of(connected_seller)
    assert schedule.next_pull_at is not None
    assert schedule.next_pull_at <= timezone.now()
    assert schedule.reason == "connected"


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

    # When an order is placed for them, in the same transaction
    placed_at = timezone.now()
    make_order("MP-BACK")
    # Then their next pull is one interval away, at once, and says why
    schedule = schedule_of(connected_seller)
    assert wait_of(schedule, placed_at) <= INTERVAL + 1
    assert (schedule.reason, schedule.idle_steps) == (REASON_ORDER_PLACED, 0)

    # And while the order is open, every pull keeps the short interval
    before = timezone.now()
    seller_pull(seller_id=connected_seller.id).orders
    schedule = schedule_of(connected_seller)
    assert INTERVAL - 1 <= wait_of(schedule, before) <= INTERVAL + 1
    assert schedule.reason == "open orders"
    assert open_work_reasons(seller_id=connected_seller.id) == ["open orders"]


def test_a_busy_sellers_schedule_is_not_written_by_each_new_order(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder
) -> None:
    make_order("MP-BUSY-1")
    seller_pull(seller_id=connected_seller.id).orders
    first = schedule_of(connected_seller)
    make_order("MP-BUSY-2")
    again = schedule_of(connected_seller)
    assert (again.next_pull_at, again.updated_at, again.reason) == (
        first.next_pull_at,
        first.updated_at,
        "open orders",
    )


def test_a_failing_pull_backs_off_bounded_and_shows_why(seller: Seller) -> None:
    PullSchedule.objects.create(seller=seller, next_pull_at=timezone.now())
    waits = []
    for _ in range(5):
        now = timezone.now()
        schedule = pull_schedule_after_pull(seller_id=seller.id, failed=True, now=now)
        assert schedule is not None
        waits.append(wait_of(schedule, now))
    assert waits == [90, 180, 360, 600, 600]
    assert schedule.reason == "failing — retry 5"
    # A pull that works again: back to what the seller's work says
    schedule = pull_schedule_after_pull(seller_id=seller.id, reasons=["open orders"])
    assert schedule is not None
    assert (schedule.failures, schedule.reason) == (0, "open orders")


def test_a_pull_of_a_seller_no_longer_connected_takes_them_off_the_schedule(
    platform: Platform, connected_seller: Any
) -> None:
    PlatformConnection.objects.filter(seller=connected_seller).update(state="needs_reauth")
    result = seller_pull(seller_id=connected_seller.id).orders
    assert result.error == "not connected"
    schedule = schedule_of(connected_seller)
    assert (schedule.next_pull_at, schedule.reason) == (None, "not connected")
    # An order placed meanwhile does not schedule a pull that cannot run
    make_order("MP-OFF")
    assert schedule_of(connected_seller).next_pull_at is None
    # A reconnect does
    platform.reconnect(connected_seller)
    schedule = schedule_of(connected_seller)
    assert schedule.next_pull_at is not None
    assert schedule.next_pull_at <= timezone.now()


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
    statements = [q["sql"] for q in captured.captured_queries if "pullschedule" in q["sql"]]
    assert len(statements) == 4
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
    assert pull_schedule_claim_due(limit=10, now=now) == due
    assert pull_schedule_claim_due(limit=10, now=now + timedelta(seconds=299)) == []
    assert pull_schedule_claim_due(limit=10, now=now + timedelta(seconds=301)) == due


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
                    PullSchedule.objects.select_for_update()
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
        assert pull_schedule_claim_due(limit=50) == due[5:]
    finally:
        release.set()
        thread.join()
    assert claimed == [due[:5]]


# --- Pull now and the pages -----------------------------------------------------------


def test_pull_now_queues_at_once_and_the_next_beat_does_not_queue_it_again(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder
) -> None:
    seller_pull(seller_id=connected_seller.id).orders  # idle: backed off
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
    seller_pull(seller_id=connected_seller.id).orders
    detail = client.get(reverse("dashboard:seller", args=[connected_seller.id])).content.decode()
    assert re.search(r'id="next-pull">in [23] min<', detail)  # 180 s ± 10 %
    assert "idle — backing off (step 1)" in detail
    listing = client.get(reverse("dashboard:sellers")).content.decode()
    assert "next pull in" in listing
    assert "idle — backing off (step 1)" in listing


def test_the_migration_makes_every_connected_sellers_pull_due_at_once(
    seller: Seller, other_seller: Seller
) -> None:
    import importlib

    migration = importlib.import_module("sellers.migrations.0004_pull_schedule").Migration
    PlatformConnection.objects.create(seller=seller, state="connected")
    PlatformConnection.objects.create(seller=other_seller, state="needs_reauth")
    PullSchedule.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute(migration.operations[-1].sql)
    schedule = PullSchedule.objects.get()
    assert schedule.seller_id == seller.id
    assert schedule.next_pull_at is not None
    assert schedule.next_pull_at <= timezone.now()
    assert sellers_pull_fan_out() == [seller.id]
