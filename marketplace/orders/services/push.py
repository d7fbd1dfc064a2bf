"""Pushing orders to the platform (``PUT /orders/{n}``): the order push kind of the outbox.

The outbox engine (``marketplace.outbox``) claims due sync rows in batches with a lease,
calls the platform with no transaction open and records every answer while the claim
holds. This kind says what is sent (the order's *current* state, built at claim time)
and what an answer means for the order's sync row:

* A change during the call bumps ``desired_version``; when the claimer records its
  result it sees the newer version and queues the next push (which sends the newer state).
* A push that finds the version already pushed does nothing (duplicate wake-ups are free).
* A seller whose connection is not live: the order waits for the reconnect
  (``push_recovery.orders_release_for_seller``), no attempt counted.
* A 400 is a dead letter at once (unless a newer version waits: a different request).

``order_push`` / ``orders_push`` push named orders (delayed retries, tests, admin tools);
``orders_push_drain`` drains whatever is due (the doorbell's task).
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, cast

from django.conf import settings
from django.db.models import Q

from marketplace.orders.models import Order, OrderLine, OrderSync, SyncEvent
from marketplace.orders.payloads import LINE_COLUMNS, ORDER_COLUMNS, Get, order_payload_of
from marketplace.orders.services.call_outcome import seller_call_outcome
from marketplace.orders.services.outbox import PUSH_DOORBELL, Events, push_enqueue
from marketplace.outbox import drain, lease
from marketplace.outbox.kind import Answer, Claim, Journal, OutboxKind, Tuning
from marketplace.outbox.outcomes import SKIPPED, Outcome
from marketplace.platform.order_source import OrderSourceClient
from sellers.models import PlatformConnection
from sellers.token_source import order_client_kept

Status = OrderSync.Status
RESPONSE_EXCERPT_CHARS = 2000


def call_budget_seconds() -> float:
    """The longest one push can take: two attempts (401 → refresh → retry) and a refresh."""
    return 3 * (settings.PLATFORM_CONNECT_TIMEOUT + settings.PLATFORM_READ_TIMEOUT)


@dataclass(frozen=True)
class OrderPut:
    mp_order_number: str
    payload: dict[str, Any]
    connection: PlatformConnection


def mark_waiting(sync: OrderSync, reason: str, events: Events) -> None:
    if sync.status != Status.WAITING_FOR_CONNECTION:
        events.add(
            sync, SyncEvent.Kind.WAITING_FOR_CONNECTION, reason, version=sync.desired_version
        )
    sync.status = Status.WAITING_FOR_CONNECTION
    sync.next_attempt_at = None
    sync.last_error = reason
    lease.clear(sync)


class OrderPushKind(OutboxKind):
    name = "order push"
    model = OrderSync
    open_statuses = (Status.PENDING, Status.RETRYING)
    dead_status = Status.FAILED
    tuning = Tuning.named("PUSH")
    fields: ClassVar[list[str]] = ["status", "last_response", "last_pushed_at", "pushed_version"]
    claim_fields: ClassVar[list[str] | None] = ["status", "claimed_version", "last_payload"]
    claim_defer = ("last_response",)
    record_defer = ("last_payload",)
    # A backlog is the push's peak (a sale, a reconnect's release): keep its calls going.
    sends_ahead = True

    def call_budget_seconds(self) -> float:
        return call_budget_seconds()

    def send_concurrency(self) -> int:
        return int(settings.PUSH_SEND_CONCURRENCY)

    def late(self, now: datetime) -> Q:
        # Pending for longer than the grace period (a drain would have taken it) or a
        # retry that is due: nothing may be on its way for these.
        grace = now - timedelta(seconds=settings.PUSH_SWEEP_GRACE_SECONDS)
        return Q(status=Status.PENDING, next_attempt_at__lte=grace) | Q(
            status=Status.RETRYING, next_attempt_at__lte=now
        )

    def key_field(self) -> str:
        return "order_id"

    def key_of(self, row: Any) -> int:
        return int(row.order_id)

    def skip(self, row: Any, now: datetime, force: bool, changed: list[Any]) -> str | None:
        sync = cast(OrderSync, row)
        if sync.pushed_version < sync.desired_version:
            return None
        if sync.status != Status.SYNCED and not lease.is_held(sync, now):
            sync.status = Status.SYNCED
            sync.next_attempt_at = None
            lease.clear(sync)
            changed.append(sync)
        return "up to date"

    def journal(self) -> Journal:
        return Events()

    def prepare(
        self, rows: list[Any], token: str, now: datetime, journal: Journal
    ) -> tuple[list[Claim], dict[int, str]]:
        events = cast(Events, journal)
        # Read the orders in a statement of their own, after the locks are held. Joined
        # into the locking query, Postgres would re-check only the locked sync rows after
        # waiting for a concurrent change and keep the order rows from before it: a new
        # version with the old state, pushed and marked synced (a lost update). Every
        # change bumps the version under the sync row's lock, so this read matches it.
        ids = [s.order_id for s in rows]
        # Rows, not model instances: the payload reads each field once (payloads.py).
        orders = {
            o["id"]: o
            for o in Order.objects.filter(id__in=ids).values("id", "seller_id", *ORDER_COLUMNS)
        }
        lines: dict[int, list[Get]] = defaultdict(list)
        for line in (
            OrderLine.objects.filter(order_id__in=ids)
            .order_by("order_id", "id")
            .values("order_id", *LINE_COLUMNS)
        ):
            lines[line["order_id"]].append(line.__getitem__)
        connections = {
            c.seller_id: c
            for c in PlatformConnection.objects.filter(
                seller_id__in={o["seller_id"] for o in orders.values()}
            )
        }
        claims: list[Claim] = []
        verdicts: dict[int, str] = {}
        for sync in rows:
            order = orders[sync.order_id]
            connection = connections.get(order["seller_id"])
            if connection is None or not connection.is_live:
                mark_waiting(sync, "the seller's platform connection is not live", events)
                verdicts[sync.order_id] = sync.status
                continue
            payload = order_payload_of(order.__getitem__, lines[sync.order_id])
            sync.claimed_version = sync.desired_version
            sync.last_payload = payload
            put = OrderPut(order["mp_order_number"], payload, connection)
            claims.append(
                Claim(sync.pk, sync.order_id, order["seller_id"], token, sync.desired_version, put)
            )
        return claims, verdicts

    def group_open(self, group: int, claims: list[Claim]) -> Any:
        client = order_client_kept(claims[0].data.connection)
        # Read each seller's token here, once: sender threads then need no database.
        with contextlib.suppress(Exception):  # send_one meets and records the error
            client.access_token()
        return client

    def send_one(self, client: Any, claim: Claim) -> Outcome:
        put = cast(OrderPut, claim.data)
        source = cast(OrderSourceClient, client)
        return seller_call_outcome(
            lambda: source.put_order(put.mp_order_number, put.payload),
            connection_id=put.connection.pk,
            what=f"pushing order {put.mp_order_number}",
        )

    def done(self, row: Any, answer: Answer) -> None:
        sync, claim = cast(OrderSync, row), cast(Claim, answer.claim)
        sync.pushed_version = max(sync.pushed_version, claim.version)
        sync.last_pushed_at = answer.now
        response = json.dumps(answer.outcome.response or {}, default=str)
        sync.last_response = response[:RESPONSE_EXCERPT_CHARS]
        sync.last_error = ""
        sync.last_error_status = None
        sync.failures = 0
        state = claim.data.payload.get("marketplace_state")
        message = f"platform has the order as {state}"
        _events(answer).add(sync, SyncEvent.Kind.PUSHED, message, version=claim.version)
        if sync.desired_version > sync.pushed_version:
            _newer_version_next(sync, answer.now)  # changed while we were pushing
        else:
            sync.status = Status.SYNCED
            sync.next_attempt_at = None

    def rejected(self, row: Any, answer: Answer) -> None:
        sync, claim, outcome = cast(OrderSync, row), cast(Claim, answer.claim), answer.outcome
        _events(answer).add(
            sync,
            SyncEvent.Kind.PUSH_FAILED,
            f"platform rejected the order ({outcome.status}): {outcome.message}",
            version=claim.version,
            detail={"status": outcome.status},
        )
        if sync.desired_version > claim.version:
            # A newer version is already waiting; it is a different request, so try it.
            _newer_version_next(sync, answer.now)
        else:
            sync.status = Status.FAILED
            sync.next_attempt_at = None

    def waiting(self, row: Any, answer: Answer) -> None:
        mark_waiting(cast(OrderSync, row), answer.outcome.message, _events(answer))

    def retrying(self, row: Any, answer: Answer, delay: float, counts: bool) -> None:
        sync = cast(OrderSync, row)
        sync.status = Status.RETRYING
        what = f"failure {sync.failures}" if counts else "rate limited"
        message = f"{what}: {answer.outcome.message}; next attempt in {delay:.1f} s"
        detail = {"status": answer.outcome.status, "delay_seconds": round(delay, 3)}
        _history(answer, sync, SyncEvent.Kind.RETRY_SCHEDULED, message, detail)

    def dead_letter(self, row: Any, answer: Answer) -> None:
        sync = cast(OrderSync, row)
        sync.status = Status.FAILED
        sync.last_error = f"gave up after {sync.failures} failed attempts: {answer.outcome.message}"
        sync.next_attempt_at = None
        detail = {"status": answer.outcome.status}
        _history(answer, sync, SyncEvent.Kind.PUSH_FAILED, sync.last_error, detail)

    def wake(self, key: int, countdown: float | None = None) -> None:
        push_enqueue(order_id=key, countdown=countdown)

    def ring(self, *, force: bool = False) -> None:
        PUSH_DOORBELL.ring(force=force)

    def drain_begin(self) -> None:
        PUSH_DOORBELL.clear()


def _events(answer: Answer) -> Events:
    return cast(Events, answer.journal)


def _history(
    answer: Answer, sync: OrderSync, kind: str, message: str, detail: dict[str, Any]
) -> None:
    """An event of the version the answer was for (a lost worker's: the claimed one)."""
    version = answer.claim.version if answer.claim else sync.claimed_version
    _events(answer).add(sync, kind, message, version=version, detail=detail)


def _newer_version_next(sync: OrderSync, now: datetime) -> None:
    """A newer version than the one just sent is waiting: push it now, counting afresh."""
    sync.status = Status.PENDING
    sync.attempts = 0
    sync.failures = 0
    sync.next_attempt_at = now
    push_enqueue(order_id=sync.order_id)


ORDER_PUSH = OrderPushKind()


def orders_push(*, order_ids: Iterable[int], force: bool = False) -> dict[int, str]:
    """Push these orders' current state where the platform does not have it yet.

    Returns each order's sync status afterwards ("skipped" when there was nothing to do).
    ``force`` pushes failed, waiting or not-yet-due orders now (admin tools).
    """
    return drain.run(ORDER_PUSH, keys=order_ids, force=force)


def order_push(*, order_id: int, force: bool = False) -> str:
    """Push one order (see ``orders_push``); returns its sync status or "skipped"."""
    return orders_push(order_ids=[order_id], force=force).get(order_id, SKIPPED)


def orders_push_drain(*, seconds: float | None = None) -> int:
    """Push due orders in batches until none is left or ``seconds`` have passed.

    Returns how many orders were claimed. Runs side by side with other drains.
    """
    return drain.drain(ORDER_PUSH, seconds=seconds)
