"""The outbox engine's cycle, seen through the order push kind with the platform call
replaced (what the platform answers is not the subject here): an answer is recorded only
while its claim holds, a call never started is not an attempt, a lost worker's claim
counts as a failure, and the three senders are kinds of this one engine."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.catalog.listing_status.edrts_sender import EDRTS_SEND
from marketplace.orders.models import OrderSync
from marketplace.orders.services.push import ORDER_PUSH
from marketplace.outbox import drain
from marketplace.outbox.claim import claim
from marketplace.outbox.drain import cycle
from marketplace.outbox.kind import Claim, OutboxKind
from marketplace.outbox.models import OutboxItem
from marketplace.outbox.outcomes import OK, TRANSIENT, UNSENT, WORKER_LOST, Outcome
from marketplace.outbox.send import Sending
from marketplace.platform.calllog import platform_call_record
from marketplace.platform.models import PlatformCall
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


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The drain's claims, records and calls, in the order they happened."""
    happened: list[str] = []
    monkeypatch.setattr(drain, "claim", _noted(happened, "claim", drain.claim))
    monkeypatch.setattr(drain, "record", _noted(happened, "record", drain.record))
    return happened


_noted_lock = threading.Lock()


def _noted(happened: list[str], what: str, function: Any) -> Any:
    """``function``, noting ``what`` in ``happened`` each time it returns."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        with _noted_lock:
            happened.append(what)
        return result

    return wrapper


def test_a_backlog_is_claimed_and_recorded_while_calls_are_in_flight(
    connected_seller: Any,
    quiet_broker: BrokerRecorder,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    steps: list[str],
) -> None:
    # One call at a time, as the P1 benchmark runs it: the calls still go to a sender
    # thread. The last call of each full batch (calls 2 and 4) holds on until the drain
    # has claimed the next batch: the claim happens while that call is in flight.
    settings.PUSH_BATCH_SIZE, settings.PUSH_SEND_CONCURRENCY = 2, 1
    orders = [make_order(f"MP-AHEAD-{i}") for i in range(5)]
    sent: list[int] = []
    claims_before_end = {1: 2, 3: 3}  # call index → claims made before it may end
    waited_in_vain: list[int] = []

    def send_one(client: Any, claim: Claim) -> Outcome:
        index = len(sent)
        deadline = time.monotonic() + 5
        while steps.count("claim") < claims_before_end.get(index, 0):
            if time.monotonic() > deadline:
                waited_in_vain.append(index)
                break
            time.sleep(0.005)
        if index == 0:
            # Not during the batch's first call: the next batch's lease would start early.
            time.sleep(0.05)
            claims_during_first_call.append(steps.count("claim"))
        sent.append(claim.key)
        return Outcome(OK, response={})

    claims_during_first_call: list[int] = []
    monkeypatch.setattr(ORDER_PUSH, "group_open", lambda group, claims: None)
    monkeypatch.setattr(ORDER_PUSH, "send_one", send_one)
    assert drain.drain(ORDER_PUSH) == 5
    assert claims_during_first_call == [1]
    assert sorted(sent) == sorted(o.id for o in orders)
    assert waited_in_vain == []
    assert {s.status for s in OrderSync.objects.filter(order__in=orders)} == {"synced"}
    # Claims 2 and 3 happened during the last calls of batches 1 and 2; batch 1 was
    # recorded while batch 2 was sent; the partial third batch is sent and recorded the
    # plain way.
    assert steps == ["claim", "claim", "record", "claim", "record", "record", "claim"]
    assert OrderSync.objects.filter(order__in=orders, attempts=1).count() == 5


@dataclass
class Backlog:
    """Two full batches of two orders each, due."""

    first: list[int]
    second: list[int]

    def rows(self) -> dict[int, OrderSync]:
        keys = [*self.first, *self.second]
        return {s.order_id: s for s in OrderSync.objects.filter(order_id__in=keys)}


@pytest.fixture
def backlog(connected_seller: Any, quiet_broker: BrokerRecorder, settings: Any) -> Backlog:
    settings.PUSH_BATCH_SIZE = 2
    keys = [make_order(f"MP-BACKLOG-{i}").id for i in range(4)]
    return Backlog(first=keys[:2], second=keys[2:])


def sending(monkeypatch: pytest.MonkeyPatch, send_one: Any) -> None:
    monkeypatch.setattr(ORDER_PUSH, "group_open", lambda group, claims: None)
    monkeypatch.setattr(ORDER_PUSH, "send_one", send_one)


def test_a_batchs_call_records_are_written_once_the_next_batchs_calls_are_under_way(
    backlog: Backlog, settings: Any, monkeypatch: pytest.MonkeyPatch, steps: list[str]
) -> None:
    settings.PUSH_SEND_CONCURRENCY = 1

    def send_one(client: Any, claim: Claim) -> Outcome:
        platform_call_record(method="PUT", path=f"/orders/{claim.key}", status=201, duration_ms=1)
        return Outcome(OK, response={})

    sending(monkeypatch, send_one)
    monkeypatch.setattr(drain, "send_start", _noted(steps, "start", drain.send_start))
    real_write = Sending.calls_write
    before = PlatformCall.objects.count()  # connecting the seller made calls

    def calls_write(self: Sending) -> None:
        real_write(self)
        steps.append(f"{PlatformCall.objects.count() - before} calls written")

    monkeypatch.setattr(Sending, "calls_write", calls_write)
    assert drain.drain(ORDER_PUSH) == 4
    # Writing the first batch's call records waits until the second batch's calls have
    # started: it is database work, like the record, and no call waits for it.
    assert steps == [
        "claim", "start", "claim", "start", "2 calls written", "record",
        "claim", "4 calls written", "record",
    ]  # fmt: skip
    assert {s.status for s in backlog.rows().values()} == {"synced"}


def test_a_drain_that_raises_still_records_the_calls_in_flight(
    backlog: Backlog, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.PUSH_SEND_CONCURRENCY = 1
    before = PlatformCall.objects.count()  # connecting the seller made calls

    def send_one(client: Any, claim: Claim) -> Outcome:
        if claim.key in backlog.second:
            time.sleep(0.1)  # still in flight when the first batch's record fails
        platform_call_record(method="PUT", path=f"/orders/{claim.key}", status=201, duration_ms=1)
        return Outcome(OK, response={})

    sending(monkeypatch, send_one)
    real_record = drain.record

    def record(kind: Any, claims: list[Claim], outcomes: Any) -> Any:
        if claims[0].key in backlog.first:  # the first batch's answers cannot be written
            raise RuntimeError("the database went away")
        return real_record(kind, claims, outcomes)

    monkeypatch.setattr(drain, "record", record)
    with pytest.raises(RuntimeError, match="went away"):
        drain.drain(ORDER_PUSH)
    rows = backlog.rows()
    # The error came while the second batch's calls were in flight: they were awaited and
    # recorded. The first batch's answers are lost: its rows wait for their lease to run
    # out, as a lost worker's do.
    assert {rows[k].status for k in backlog.second} == {"synced"}
    assert all(rows[k].claim_token and rows[k].status == "pending" for k in backlog.first)
    assert [r.attempts for r in rows.values()] == [1, 1, 1, 1]
    # Every call made is in the call log, those that ended after the error too.
    assert PlatformCall.objects.count() - before == 4


def test_a_drain_that_raises_gives_back_the_batch_it_claimed_ahead(
    backlog: Backlog, monkeypatch: pytest.MonkeyPatch
) -> None:
    def send_one(client: Any, claim: Claim) -> Outcome:
        time.sleep(0.2)  # long enough for the next batch to be claimed meanwhile
        raise RuntimeError("a bug in the sender")

    sending(monkeypatch, send_one)
    with pytest.raises(RuntimeError, match="a bug in the sender"):
        drain.drain(ORDER_PUSH)
    rows = backlog.rows()
    # The batch whose calls raised waits for its lease; the one claimed ahead of it was
    # never sent: free at once, and no attempt counted.
    assert all(rows[k].claim_token and rows[k].attempts == 1 for k in backlog.first)
    assert [(rows[k].claim_token, rows[k].attempts) for k in backlog.second] == [("", 0)] * 2


def test_a_batch_claimed_ahead_and_never_sent_is_free_at_once_and_not_an_attempt(
    backlog: Backlog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every call of the first batch finds no time left in its lease: the drain stops
    # rather than spin, and the batch it claimed meanwhile is handed back untouched.
    sending(monkeypatch, lambda client, claim: Outcome(UNSENT))
    assert drain.drain(ORDER_PUSH) == 2
    rows = backlog.rows().values()
    assert [(s.status, s.claim_token, s.attempts) for s in rows] == [("pending", "", 0)] * 4
