"""Pushing orders to the platform (``PUT /orders/{n}``), in batches, without locks across HTTP.

Claim, call, record
-------------------
A push *claims* sync rows in one short transaction (row locks; on SQLite the IMMEDIATE
transaction serializes writers): for each row it records the batch's random claim token,
the version it will send and ``lease_until``, and builds the payload from the order's
*current* state. It then calls the platform with no transaction open, one order after
the other, and records every result in a second short transaction, for each row only if
it still holds the claim.

* While a claim is live nobody else pushes that order, so two pushes of one order never
  overlap and cannot overtake each other at the platform.
* A change during the call bumps ``desired_version``; when the claimer records its
  result it sees the newer version and queues the next push (which sends the newer state).
* A push that finds the version already pushed does nothing (duplicate wake-ups are free).
* A worker that dies mid-batch leaves claims that expire after ``PUSH_LEASE_SECONDS``;
  the next drain (or the sweeper's) claims those orders again. A batch stops sending
  while it can still finish its current call before its lease ends.

Why batches
-----------
Per order, the work around the HTTP call (a broker message, two transactions, a call-log
row, an event) cost several times what the call itself costs. A *drain* claims up to
``PUSH_BATCH_SIZE`` due orders with ``SKIP LOCKED`` (several workers drain side by side
without waiting on each other), so those costs are paid once per batch. Wake-ups come
from the doorbell (``services/doorbell.py``); a drain that finds a full batch rings it,
so an idle worker joins in. ``order_push`` is the same code for one order (delayed
retries, tests, admin tools).

This module claims and runs the cycle; ``push_send.py`` calls the platform and
``push_results.py`` records the answers. The sweeper, releases after a reconnect and
admin retries are in ``push_recovery.py``.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from marketplace.orders.models import Order, OrderSync
from marketplace.orders.payloads import order_payload
from marketplace.orders.services import doorbell
from marketplace.orders.services.outbox import push_enqueue
from marketplace.orders.services.push_results import (
    MAX_COUNTDOWN_SECONDS,
    SKIPPED,
    Claim,
    Events,
    mark_waiting,
    push_record,
    syncs_save,
)
from marketplace.orders.services.push_send import push_send
from sellers.models import PlatformConnection

logger = logging.getLogger(__name__)

Status = OrderSync.Status


# --- claiming ---------------------------------------------------------------------------


def _due(now: datetime) -> Q:
    """Rows a drain may claim: pending or retrying, due, and not claimed by a live lease."""
    # No tolerance: a retry due in a moment is not due yet. A platform's Retry-After of
    # one second is a promise we keep, not a figure to round away.
    return Q(status__in=[Status.PENDING, Status.RETRYING], next_attempt_at__lte=now) & (
        Q(claim_token="") | Q(lease_until__lt=now)
    )


def _skip_reason(sync: OrderSync, now: datetime, force: bool) -> str | None:
    """Why this (locked) row must not be pushed now, or None if it may."""
    if sync.pushed_version >= sync.desired_version:
        return "up to date"
    if sync.claim_token and sync.lease_until and sync.lease_until > now:
        return "claimed"  # another worker is pushing; it re-queues if a newer version came
    if sync.status == Status.FAILED and not force:
        return "failed"  # dead letter: waits for a person
    if (
        sync.status == Status.RETRYING
        and not force
        and sync.next_attempt_at
        and sync.next_attempt_at > now
    ):
        return "not due"  # its own wake-up or the sweeper comes back
    return None


def _push_claim(
    *, order_ids: list[int] | None, force: bool = False, limit: int = 1
) -> tuple[list[Claim], dict[int, str], int]:
    """Claim the given orders, or (``order_ids=None``) up to ``limit`` due ones.

    Returns the claims, the status of each row looked at but not claimed ("skipped" or
    its new status) and how many rows were looked at.
    """
    now = timezone.now()
    token = secrets.token_hex(16)
    with transaction.atomic():
        if order_ids is not None:
            # Named orders wait for a row lock (ordered by id: no deadlock between batches).
            locked = OrderSync.objects.select_for_update().filter(order_id__in=order_ids)
            syncs = list(locked.order_by("id"))
        else:
            # Drains skip rows another transaction holds: that one is claiming or
            # recording them, or changing the order (and will ring again).
            locked = OrderSync.objects.select_for_update(skip_locked=True).filter(_due(now))
            syncs = list(locked.order_by("next_attempt_at", "id")[:limit])
        verdicts: dict[int, str] = {}
        claimable: list[OrderSync] = []
        changed: list[OrderSync] = []
        for sync in syncs:
            reason = _skip_reason(sync, now, force)
            if reason is None:
                claimable.append(sync)
                continue
            verdicts[sync.order_id] = SKIPPED
            if reason == "not due" and sync.next_attempt_at is not None:
                # Woken a moment early (another host's clock, a broker's rounding):
                # come back when it is due rather than wait for the sweeper.
                early = (sync.next_attempt_at - now).total_seconds()
                if early <= MAX_COUNTDOWN_SECONDS:
                    push_enqueue(order_id=sync.order_id, countdown=early)
            live_claim = sync.claim_token and sync.lease_until and sync.lease_until > now
            if reason == "up to date" and sync.status != Status.SYNCED and not live_claim:
                sync.status = Status.SYNCED
                sync.next_attempt_at = None
                sync.claim_token = ""
                sync.lease_until = None
                changed.append(sync)
        # Read the orders in a statement of their own, after the locks are held. Joined
        # into the locking query, Postgres would re-check only the locked sync rows after
        # waiting for a concurrent change and keep the order rows from before it: a new
        # version with the old state, pushed and marked synced (a lost update). Every
        # change bumps the version under the sync row's lock, so this read matches it.
        orders = Order.objects.prefetch_related("lines").in_bulk([s.order_id for s in claimable])
        connections = {
            c.seller_id: c
            for c in PlatformConnection.objects.filter(
                seller_id__in={o.seller_id for o in orders.values()}
            )
        }
        events = Events()
        claims: list[Claim] = []
        lease_until = now + timedelta(seconds=settings.PUSH_LEASE_SECONDS)
        for sync in claimable:
            order = orders[sync.order_id]
            connection = connections.get(order.seller_id)
            if connection is None or not connection.is_live:
                mark_waiting(sync, "the seller's platform connection is not live", events)
                verdicts[sync.order_id] = sync.status
            else:
                payload = order_payload(order)
                sync.claim_token = token
                sync.claimed_version = sync.desired_version
                sync.lease_until = lease_until
                sync.attempts += 1
                sync.last_payload = payload
                claims.append(
                    Claim(
                        order_id=order.id,
                        mp_order_number=order.mp_order_number,
                        token=token,
                        version=sync.claimed_version,
                        payload=payload,
                        connection=connection,
                    )
                )
            changed.append(sync)
        syncs_save(changed, now)
        events.write()
    return claims, verdicts, len(syncs)


# --- entry points ---------------------------------------------------------------------------


def _push_claimed(claims: list[Claim]) -> tuple[dict[int, str], int]:
    """Send and record; returns the statuses and how many orders were actually sent."""
    if not claims:
        return {}, 0
    outcomes = push_send(claims)
    sent = sum(1 for outcome in outcomes.values() if outcome.kind != "unsent")
    return push_record(claims, outcomes), sent


def orders_push(*, order_ids: Iterable[int], force: bool = False) -> dict[int, str]:
    """Push these orders' current state where the platform does not have it yet.

    Returns each order's sync status afterwards ("skipped" when there was nothing to do).
    ``force`` pushes failed, waiting or not-yet-due orders now (admin tools).
    """
    claims, verdicts, _ = _push_claim(order_ids=list(order_ids), force=force)
    return {**verdicts, **_push_claimed(claims)[0]}


def order_push(*, order_id: int, force: bool = False) -> str:
    """Push one order (see ``orders_push``); returns its sync status or "skipped"."""
    return orders_push(order_ids=[order_id], force=force).get(order_id, SKIPPED)


def orders_push_drain(*, seconds: float | None = None) -> int:
    """Push due orders in batches until none is left or ``seconds`` have passed.

    Returns how many orders were claimed. Runs side by side with other drains.
    """
    budget = settings.PUSH_DRAIN_SECONDS if seconds is None else seconds
    batch_size = settings.PUSH_BATCH_SIZE
    # Before the first claim: a change committed after it must ring again.
    doorbell.push_drain_doorbell_clear()
    started = time.monotonic()
    claimed = 0
    while True:
        claims, _, looked_at = _push_claim(order_ids=None, limit=batch_size)
        if looked_at == 0:
            return claimed
        if looked_at == batch_size:
            doorbell.push_drain_ring()  # there may be more: let an idle worker drain beside us
        claimed += len(claims)
        _, sent = _push_claimed(claims)
        if claims and not sent:
            # Nothing could be sent within the lease (PUSH_LEASE_SECONDS too short for the
            # timeouts): do not spin; the orders stay due for the next drain.
            logger.error("push batch sent nothing: PUSH_LEASE_SECONDS is below the call budget")
            return claimed
        if time.monotonic() - started > budget:
            # Hand over rather than hog the worker process; the rest stays due.
            doorbell.push_drain_ring(force=True)
            return claimed
