"""Pushing orders to the sandbox (real HTTP), calling the push service directly.

The broker is quiet here (wake-ups are recorded, not sent) so each test drives the
retries itself and checks what the outbox row says in between.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from marketplace.orders.models import OrderSync, SyncEvent
from marketplace.orders.payloads import order_payload
from marketplace.orders.services.intake import order_cancel, order_state_change
from marketplace.orders.services.outbox import PUSH_DOORBELL
from marketplace.orders.services.push import order_push, orders_push_drain
from marketplace.orders.services.push_recovery import (
    order_sync_retry,
    order_sync_sweep,
    seller_failed_orders_retry,
)
from marketplace.platform.models import PlatformCall
from marketplace.sync.fan_out import sellers_pull_fan_out
from tests.marketplace.conftest import BrokerRecorder, embargo_clear, make_order
from tests.support.app_fixtures import PLATFORM_SELLER, Platform

pytestmark = pytest.mark.django_db


def sync_of(order: Any) -> OrderSync:
    return OrderSync.objects.get(order=order)


def make_due(order: Any) -> None:
    """As if the wait were over: the retry is due and the seller's embargo has passed."""
    OrderSync.objects.filter(order=order).update(next_attempt_at=timezone.now())
    embargo_clear()


def test_push_places_the_order_at_the_platform_with_every_field(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder
) -> None:
    order = make_order("MP-P1")
    assert order_push(order_id=order.id) == "synced"
    placed = platform.order("MP-P1")
    assert placed["marketplace_state"] == "AWAITING_SHIPMENT"
    body = placed["placed"]
    assert body["customer"]["email"] == "ada@example.com"
    assert body["shipping_address"]["postal_code"] == "N1 9GU"
    assert body["order_lines"][0]["unit_price"] == 12.5
    assert body["order_lines"][0]["taxes"] == [{"type": "VAT", "amount": 2.5}]
    assert body["delivery_notes"] == "Leave with the porter"
    assert body["location"] == "warehouse-1"
    sync = sync_of(order)
    assert (sync.status, sync.pushed_version, sync.desired_version) == ("synced", 1, 1)
    assert sync.last_payload == body
    # The claim builds the body from rows; the model's own builder gives the same body.
    assert sync.last_payload == order_payload(order)
    assert SyncEvent.objects.filter(order=order, kind="pushed").count() == 1
    call = PlatformCall.objects.get(method="PUT")
    assert call.status == 201
    assert call.seller_id == connected_seller.id
    assert "Ada" not in call.request_excerpt  # buyer details stay out of the call log
    # A successful push logs no bodies: the sync row keeps what was sent and the answer.
    assert (call.request_excerpt, call.response_excerpt) == ("", "")
    assert '"mp_order_number": "MP-P1"' in sync.last_response
    # Nothing new: a second wake-up does not call the platform.
    assert order_push(order_id=order.id) == "skipped"
    assert PlatformCall.objects.filter(method="PUT").count() == 1


def test_state_change_and_cancellation_reach_the_platform(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    order = make_order("MP-P2", marketplace_state="PENDING")
    order_push(order_id=order.id)
    order_state_change(mp_order_number="MP-P2", state="AWAITING_SHIPMENT")
    order_push(order_id=order.id)
    assert platform.order("MP-P2")["marketplace_state"] == "AWAITING_SHIPMENT"
    order_cancel(mp_order_number="MP-P2")
    order_push(order_id=order.id)
    history = [h["state"] for h in platform.order("MP-P2")["state_history"]]
    assert history == ["PENDING", "AWAITING_SHIPMENT", "CANCELLED"]
    assert sync_of(order).pushed_version == 3


def test_429_waits_as_long_as_retry_after_says_then_syncs(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder,
    django_capture_on_commit_callbacks: Any, settings: Any,
) -> None:  # fmt: skip
    settings.PUSH_BACKOFF_CAP = 10  # wake-ups up to 10 s ride on a countdown
    platform.sandbox.set_faults(endpoint="put_order", kind="429", count=1, retry_after=7)
    order = make_order("MP-429")
    before = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        assert order_push(order_id=order.id) == "retrying"
    sync = sync_of(order)
    assert sync.next_attempt_at >= before + timedelta(seconds=7)
    assert sync.failures == 0  # a 429 does not count towards the dead letter
    # Retry-After: 7, and X-Rate-Limit-Reset the next whole second after that: the
    # later of the two is honoured.
    assert quiet_broker.pushes[-1][0] == order.id
    assert 7 <= quiet_broker.pushes[-1][1] <= 8.01
    assert order_push(order_id=order.id) == "skipped"  # not due yet
    make_due(order)
    assert order_push(order_id=order.id) == "synced"


@pytest.mark.parametrize("kind", ["500", "502", "503", "malformed_json"])
def test_transient_failures_back_off_and_eventually_sync(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder, kind: str
) -> None:
    platform.sandbox.set_faults(endpoint="put_order", kind=kind, count=2)
    order = make_order(f"MP-T-{kind}")
    assert order_push(order_id=order.id) == "retrying"
    first = sync_of(order)
    assert first.failures == 1
    assert first.next_attempt_at > timezone.now() - timedelta(seconds=1)
    make_due(order)
    assert order_push(order_id=order.id) == "retrying"
    assert sync_of(order).failures == 2
    make_due(order)
    assert order_push(order_id=order.id) == "synced"
    assert platform.order(f"MP-T-{kind}")["marketplace_state"] == "AWAITING_SHIPMENT"
    kinds = list(SyncEvent.objects.filter(order=order).values_list("kind", flat=True))
    assert kinds.count("retry_scheduled") == 2


def test_timeout_is_retried(
    platform: Platform, connected_seller: Any, quiet_broker: Any, settings: Any
) -> None:
    settings.PLATFORM_READ_TIMEOUT = 0.5
    platform.sandbox.set_faults(endpoint="put_order", kind="hang", count=1, hang_seconds=2)
    order = make_order("MP-TIMEOUT")
    assert order_push(order_id=order.id) == "retrying"
    assert "timeout" in PlatformCall.objects.get(method="PUT", status=None).error
    make_due(order)
    assert order_push(order_id=order.id) == "synced"


def test_transient_failures_end_in_the_dead_letter_and_an_admin_can_retry(
    platform: Platform, connected_seller: Any, quiet_broker: Any, settings: Any
) -> None:
    settings.PUSH_MAX_FAILURES = 3
    platform.sandbox.set_faults(endpoint="put_order", kind="500")
    order = make_order("MP-DEAD")
    for _ in range(3):
        make_due(order)
        order_push(order_id=order.id)
    sync = sync_of(order)
    assert sync.status == "failed"
    assert sync.next_attempt_at is None  # the dashboard's failed list relies on it
    assert "gave up after 3" in sync.last_error
    platform.sandbox.clear_faults()
    order_sync_sweep()
    assert order_push(order_id=order.id) == "skipped"  # the sweeper leaves dead letters alone
    order_sync_retry(order_id=order.id, actor="staff")
    assert order_push(order_id=order.id) == "synced"
    assert SyncEvent.objects.filter(order=order, kind="admin_retry", actor="staff").exists()


def test_400_fails_with_the_platforms_message_and_is_not_retried(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    order = make_order("MP-400")
    # The platform knows this order with a different currency: the update is refused.
    order.currency = "USD"
    order.save()
    order_push(order_id=order.id)  # first placement succeeds with USD
    order.currency = "EUR"
    order.save()
    order_state_change(mp_order_number="MP-400", state="CANCELLED")
    quiet_broker.pushes.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert order_push(order_id=order.id) == "failed"
    sync = sync_of(order)
    assert sync.last_error_status == 400
    assert "only marketplace_state" in sync.last_error
    assert sync.next_attempt_at is None
    assert quiet_broker.pushes == []
    assert order_sync_sweep() == 0
    refused = PlatformCall.objects.get(method="PUT", status=400)
    # A failed call keeps what was sent, without the buyer's details.
    assert '"marketplace_state":"CANCELLED"' in refused.request_excerpt
    assert '"customer":"[omitted]"' in refused.request_excerpt
    assert "Ada" not in refused.request_excerpt
    assert "only marketplace_state" in refused.response_excerpt  # and what the platform said


def test_failed_orders_of_a_seller_are_retried_together(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    orders = [make_order(f"MP-F{i}") for i in range(3)]
    OrderSync.objects.filter(order__in=orders[:2]).update(status="failed", last_error="x")
    assert seller_failed_orders_retry(seller_id=connected_seller.id, actor="staff") == 2
    assert set(OrderSync.objects.values_list("status", flat=True)) == {"pending"}


def test_expired_access_token_is_refreshed_once_and_the_call_retried(
    platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    platform.sandbox.expire_tokens(PLATFORM_SELLER)  # the platform now answers 401
    order = make_order("MP-401")
    assert order_push(order_id=order.id) == "synced"
    puts = list(PlatformCall.objects.filter(method="PUT").order_by("id"))
    assert [(c.status, c.attempt) for c in puts] == [(401, 1), (201, 2)]


def test_revoked_grant_makes_orders_wait_until_the_seller_reconnects(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    platform.sandbox.revoke(PLATFORM_SELLER)
    platform.sandbox.expire_tokens(PLATFORM_SELLER)
    first, second = make_order("MP-W1"), make_order("MP-W2")
    assert order_push(order_id=first.id) == "waiting_for_connection"
    assert order_push(order_id=second.id) == "waiting_for_connection"  # no call: not live
    assert connected_seller.connection.__class__.objects.get().state == "needs_reauth"
    quiet_broker.pushes.clear()
    platform.reconnect(connected_seller)
    with django_capture_on_commit_callbacks(execute=True):
        sellers_pull_fan_out()  # the sync's next tick starts the seller: release
    assert sorted(p[0] for p in quiet_broker.pushes) == sorted([first.id, second.id])
    assert set(OrderSync.objects.values_list("status", flat=True)) == {"pending"}
    for order in (first, second):
        assert order_push(order_id=order.id) == "synced"
    assert platform.order("MP-W2")["marketplace_state"] == "AWAITING_SHIPMENT"


def test_sweeper_wakes_a_drain_that_pushes_what_was_lost_or_came_due(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder, settings: Any,
) -> None:  # fmt: skip
    settings.PUSH_SWEEP_GRACE_SECONDS = 30
    fresh, lost, due_retry, later_retry = (make_order(f"MP-S{i}") for i in range(4))
    now = timezone.now()
    OrderSync.objects.filter(order=lost).update(next_attempt_at=now - timedelta(minutes=5))
    OrderSync.objects.filter(order=due_retry).update(
        status="retrying", next_attempt_at=now - timedelta(seconds=1)
    )
    OrderSync.objects.filter(order=later_retry).update(
        status="retrying", next_attempt_at=now + timedelta(minutes=5)
    )
    assert order_sync_sweep() == 2  # the fresh one is within its grace period
    assert quiet_broker.drains == [True]
    assert orders_push_drain() == 3
    for order in (fresh, lost, due_retry):
        assert sync_of(order).status == "synced"
    assert sync_of(later_retry).status == "retrying"
    put_paths = {r["path"] for r in platform.requests(endpoint="put_order")}
    assert not any(path.endswith("/MP-S3") for path in put_paths)
    assert any(path.endswith("/MP-S1") for path in put_paths)


def test_sweeper_rings_nothing_when_nothing_is_overdue(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder, settings: Any,
) -> None:  # fmt: skip
    settings.PUSH_SWEEP_GRACE_SECONDS = 30
    make_order("MP-SW-FRESH")  # its own wake-up is on its way
    failed = make_order("MP-SW-FAILED")
    OrderSync.objects.filter(order=failed).update(status="failed", next_attempt_at=None)
    assert order_sync_sweep() == 0
    assert quiet_broker.drains == []


def test_a_drain_pushes_a_backlog_in_batches_and_calls_for_help(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder, settings: Any,
) -> None:  # fmt: skip
    settings.PUSH_BATCH_SIZE = 3
    orders = [make_order(f"MP-B{i}") for i in range(7)]
    assert orders_push_drain() == 7
    assert {sync_of(o).status for o in orders} == {"synced"}
    for order in orders:
        assert platform.order(order.mp_order_number)["marketplace_state"] == "AWAITING_SHIPMENT"
    # Two full batches asked for another worker to drain beside this one.
    assert quiet_broker.drains == [False, False]
    assert PlatformCall.objects.filter(method="PUT", status=201).count() == 7
    assert SyncEvent.objects.filter(kind="pushed").count() == 7
    assert orders_push_drain() == 0  # nothing left


def test_a_429_holds_the_rest_of_that_sellers_batch(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder,
    django_capture_on_commit_callbacks: Any, settings: Any,
) -> None:  # fmt: skip
    settings.PUSH_SEND_CONCURRENCY = 1  # in order: the hold applies to calls not started
    platform.sandbox.set_faults(endpoint="put_order", kind="429", count=1, retry_after=7)
    orders = [make_order(f"MP-RL{i}") for i in range(3)]
    quiet_broker.pushes.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert orders_push_drain() == 3
    assert len(platform.requests(endpoint="put_order")) == 1  # the others were not sent
    for order in orders:
        sync = sync_of(order)
        assert sync.status == "retrying"
        assert sync.failures == 0  # a 429 is not the order's fault
        assert (sync.next_attempt_at - timezone.now()).total_seconds() > 5
    countdowns = [c for _, c in quiet_broker.pushes if c]
    assert len(countdowns) == 3
    assert all(7 <= c <= 8.01 for c in countdowns)  # Retry-After, or the later Reset
    assert "rate-limited this seller" in sync_of(orders[2]).last_error


def test_a_batch_never_starts_a_call_that_could_outlive_its_lease(
    platform: Platform, connected_seller: Any, quiet_broker: BrokerRecorder, settings: Any,
) -> None:  # fmt: skip
    # A lease shorter than one call's timeouts: another worker could take the order over
    # while the call still runs, so the batch sends nothing and hands the orders back.
    settings.PUSH_LEASE_SECONDS = 5
    order = make_order("MP-LEASE")
    assert orders_push_drain() == 1
    assert platform.requests(endpoint="put_order") == []
    sync = sync_of(order)
    assert (sync.status, sync.claim_token, sync.attempts) == ("pending", "", 0)


@pytest.mark.skipif(not django_settings.REDIS_URL, reason="the doorbell dedupes in Redis only")
def test_many_changes_ring_one_drain_until_it_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    from marketplace.outbox import doorbell

    sent: list[str] = []
    monkeypatch.setattr(doorbell, "task_enqueue", lambda name, **_: sent.append(name))
    PUSH_DOORBELL.clear()
    rang = [PUSH_DOORBELL.ring() for _ in range(50)]
    assert (rang.count(True), len(sent)) == (1, 1)
    PUSH_DOORBELL.clear()  # the drain starts: the next change rings again
    assert PUSH_DOORBELL.ring() is True
    assert PUSH_DOORBELL.ring(force=True) is True  # the sweeper always gets through
    assert len(sent) == 3
    PUSH_DOORBELL.clear()
