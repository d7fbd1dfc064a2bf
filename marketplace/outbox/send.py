"""Sending a claimed batch: no transaction open, a call started only while it can end in
the lease, a seller's calls held after a 429 or a dead grant.

Up to the kind's ``send_concurrency`` calls are in flight at once (threads kept for the
life of the worker process, each with a keep-alive session): with a real platform a call
mostly waits for the answer, and one call at a time per worker process would need
hundreds of processes at peak rates. Every answer becomes an ``Outcome``; ``record.py``
writes them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.db import connections

from marketplace.outbox.kind import Claim, OutboxKind
from marketplace.outbox.outcomes import RATE_LIMITED, UNSENT, WAITING, Outcome
from marketplace.platform.calllog import PlatformCallsCollected, platform_calls_buffered

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _send_pool(size: int) -> ThreadPoolExecutor:
    """This process's sender threads, kept for its life: each holds a keep-alive session.

    Created on first use, so a prefork child makes its own after the fork.
    """
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size != size:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="outbox-send")
            _pool_size = size
        return _pool


def _in_sender_thread(send: Callable[[Claim], Outcome], claim: Claim) -> Outcome:
    try:
        return send(claim)
    finally:
        # A 401 (token refresh) or a lost grant reads the database from this thread:
        # do not leave that connection open in a pool thread.
        connections.close_all()


class Sending:
    """A batch's calls, started; ``outcomes`` waits for them (``send_start``)."""

    def __init__(
        self,
        futures: dict[int, Future[Outcome]],
        calls: PlatformCallsCollected | None = None,
        done: dict[int, Outcome] | None = None,
    ) -> None:
        self._futures = futures
        self._calls = calls
        self._done = done

    def wait_until_left(self, left: int) -> None:
        """Wait until at most ``left`` calls have not started or not ended (calls start in
        order: the pool's queue is first in, first out)."""
        futures = list(self._futures.values())
        for future in futures[: max(0, len(futures) - left)]:
            future.exception()  # waits; an error is raised by ``outcomes``

    def outcomes(self) -> dict[int, Outcome]:
        """The outcome per key, once every call has ended (``calls_write`` then writes
        their call records)."""
        if self._done is None:
            self._done = {key: future.result() for key, future in self._futures.items()}
        return self._done

    def calls_write(self) -> None:
        """Write the call records of the calls made so far, from this (the caller's)
        thread. A drain sending ahead writes them after the next batch's calls are under
        way: a ``COPY`` of 50 records between two batches was most of the gap between
        them (4 to 18 ms, P1 trace)."""
        if self._calls is not None:
            self._calls.write()


def send(
    kind: OutboxKind, claims: list[Claim], *, leased_at: float | None = None
) -> dict[int, Outcome]:
    """Call the platform for each claim; returns the outcome per key."""
    sending = send_start(kind, claims, leased_at=leased_at)
    try:
        return sending.outcomes()
    finally:
        sending.calls_write()


def send_start(
    kind: OutboxKind,
    claims: list[Claim],
    *,
    leased_at: float | None = None,
    in_background: bool = False,
) -> Sending:
    """Start the calls for these claims (their lease began at ``leased_at``, a
    ``time.monotonic()``; None: now).

    ``in_background``: every call runs in the sender threads, even one at a time, so the
    caller's thread can claim or record meanwhile. Otherwise a kind sending one call at a
    time sends them in the caller's thread, and they have ended when this returns.
    """
    if not claims:
        return Sending({}, done={})
    # Stop starting calls while one more could outlive the lease: past it, another
    # worker may claim the row and two calls for it could overlap.
    began = time.monotonic() if leased_at is None else leased_at
    send_until = began + kind.lease_seconds() - kind.call_budget_seconds() - 1.0
    clients: dict[int, Any] = {}
    # After a 429 or a dead connection, the group's calls not started yet are held: they
    # would meet the same answer (and a 429 asks us to slow down).
    held: dict[int, Outcome] = {}
    held_lock = threading.Lock()
    for claim in claims:
        if claim.group not in clients:
            client = kind.group_open(claim.group, [c for c in claims if c.group == claim.group])
            clients[claim.group] = client
            if isinstance(client, Outcome):
                held[claim.group] = client

    def one(claim: Claim) -> Outcome:
        with held_lock:
            hold = held.get(claim.group)
        if hold is not None:
            return hold
        if time.monotonic() > send_until:
            return Outcome(UNSENT)
        outcome = kind.send_one(clients[claim.group], claim)
        if outcome.kind == RATE_LIMITED:
            hold = Outcome(
                RATE_LIMITED,
                message=f"not sent: the platform rate-limited this seller ({outcome.message})",
                status=outcome.status,
                retry_after=outcome.retry_after,
            )
        elif outcome.kind == WAITING:
            hold = outcome
        if hold is not None:
            with held_lock:
                held.setdefault(claim.group, hold)
        return outcome

    ordered = kind.order(claims)
    concurrency = max(1, min(kind.send_concurrency(), len(ordered)))
    if concurrency == 1 and not in_background:
        with platform_calls_buffered():
            return Sending({}, done={claim.key: one(claim) for claim in ordered})
    # One call at a time in the background: a pool of one thread runs them in order.
    pool = _send_pool(kind.send_concurrency())
    calls = PlatformCallsCollected()
    futures = {
        claim.key: pool.submit(calls.run, _in_sender_thread, one, claim) for claim in ordered
    }
    return Sending(futures, calls)
