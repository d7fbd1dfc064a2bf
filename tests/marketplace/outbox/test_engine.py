"""The outbox engine's cycle, seen through the order push kind with the platform call
replaced (what the platform answers is not the subject here): an answer is recorded only
while its claim holds, a call never started is not an attempt, a lost worker's claim
counts as a failure, and the three senders are kinds of this one engine."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.catalog.listing_status.edrts_sender import EDRTS_SEND
from marketplace.orders.models import OrderSync
from marketplace.orders.services.push import ORDER_PUSH
from marketplace.outbox.claim import claim
from marketplace.outbox.drain import cycle
from marketplace.outbox.kind import Claim, OutboxKind
from marketplace.outbox.models import OutboxItem
from marketplace.outbox.outcomes import OK, TRANSIENT, UNSENT, WORKER_LOST, Outcome
from marketplace.returns.services.steps import RETURN_STEP
from tests.marketplace.conftest import BrokerRecorder, make_order

pytestmark = pytest.mark.django_db


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[Outcome]:
    """What the "platform" answers, one per call, in order."""
    queued: list[Outcome] = []

    def send_one(client: Any, claim: Claim) -> Outcome:
        return queued.pop(0)

    monkeypatch.setattr(ORDER_PUSH, "group_open", lambda group, claims: None)
    monkeypatch.setattr(ORDER_PUSH, "send_one", send_one)
    return queued


def test_the_three_senders_are_kinds_of_one_engine() -> None:
    for kind in (ORDER_PUSH, RETURN_STEP, EDRTS_SEND):
        assert isinstance(kind, OutboxKind)
        assert issubclass(kind.model, OutboxItem)


def test_an_answer_after_the_lease_was_taken_over_is_not_recorded(
    connected_seller: Any, quiet_broker: BrokerRecorder, answers: list[Outcome]
) -> None:
    order = make_order("MP-ENG-1")
    first = claim(ORDER_PUSH, keys=[order.id])
    assert [c.key for c in first.claims] == [order.id]
    # The first worker's lease runs out; another worker claims the order.
    OrderSync.objects.filter(order=order).update(lease_until=timezone.now() - timedelta(seconds=1))
    second = claim(ORDER_PUSH, keys=[order.id])
    assert second.token != first.token
    answers.append(Outcome(OK, response={"late": True}))
    statuses, _ = cycle(ORDER_PUSH, first)
    sync = OrderSync.objects.get(order=order)
    # The late answer changed nothing: the row is still the second worker's.
    assert statuses == {order.id: "pending"}
    assert (sync.claim_token, sync.pushed_version) == (second.token, 0)
    answers.append(Outcome(OK, response={"ok": True}))
    assert cycle(ORDER_PUSH, second)[0] == {order.id: "synced"}


def test_a_call_never_started_is_not_an_attempt(
    connected_seller: Any,
    quiet_broker: BrokerRecorder,
    answers: list[Outcome],
    django_capture_on_commit_callbacks: Any,
) -> None:
    order = make_order("MP-ENG-2")
    answers.append(Outcome(UNSENT))
    batch = claim(ORDER_PUSH, keys=[order.id])
    with django_capture_on_commit_callbacks(execute=True):
        statuses, _ = cycle(ORDER_PUSH, batch)
    sync = OrderSync.objects.get(order=order)
    assert statuses == {order.id: "pending"}
    assert (sync.attempts, sync.failures, sync.claim_token) == (0, 0, "")
    assert (order.id, None) in quiet_broker.pushes  # due again at once


def test_a_lost_workers_claim_counts_as_a_failure_up_to_the_dead_letter(
    connected_seller: Any, quiet_broker: BrokerRecorder, answers: list[Outcome], settings: Any
) -> None:
    settings.PUSH_MAX_FAILURES = 2
    order = make_order("MP-ENG-3")
    for _ in range(2):
        assert claim(ORDER_PUSH, keys=[order.id]).claims  # then the worker dies
        OrderSync.objects.filter(order=order).update(
            lease_until=timezone.now() - timedelta(seconds=1)
        )
    assert claim(ORDER_PUSH, keys=[order.id]).claims == []
    sync = OrderSync.objects.get(order=order)
    assert (sync.status, sync.failures, sync.claim_token) == ("failed", 2, "")
    assert WORKER_LOST in sync.last_error


def test_a_transient_failure_backs_off_within_the_formula(
    connected_seller: Any, quiet_broker: BrokerRecorder, answers: list[Outcome], settings: Any
) -> None:
    settings.PUSH_BACKOFF_BASE, settings.PUSH_BACKOFF_CAP = 8.0, 300.0
    order = make_order("MP-ENG-4")
    answers.append(Outcome(TRANSIENT, message="boom", status=503))
    before = timezone.now()
    assert cycle(ORDER_PUSH, claim(ORDER_PUSH, keys=[order.id]))[0] == {order.id: "retrying"}
    sync = OrderSync.objects.get(order=order)
    wait = (sync.next_attempt_at - before).total_seconds()
    assert 4.0 <= wait <= 8.5  # equal jitter: half fixed, half random
    assert (sync.failures, sync.last_error, sync.last_error_status) == (1, "boom", 503)
