"""Sending a claimed batch: no transaction open, a call started only while it can end in
the lease, a seller's calls held after a 429 or a dead grant.

Up to the kind's ``send_concurrency`` calls are in flight at once (threads kept for the
life of the worker process, each with a keep-alive session): with a real platform a call
mostly waits for the answer, and one call at a time per worker process would need
hundreds of processes at peak rates. Every answer becomes an ``Outcome``; ``record.py``
writes them.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connections

from marketplace.outbox.kind import Claim, OutboxKind
from marketplace.outbox.outcomes import RATE_LIMITED, UNSENT, WAITING, Outcome
from marketplace.platform.calllog import platform_calls_buffered

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


def send(kind: OutboxKind, claims: list[Claim]) -> dict[int, Outcome]:
    """Call the platform for each claim; returns the outcome per key."""
    if not claims:
        return {}
    # Stop starting calls while one more could outlive the lease: past it, another
    # worker may claim the row and two calls for it could overlap.
    send_until = time.monotonic() + kind.lease_seconds() - kind.call_budget_seconds() - 1.0
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
    with platform_calls_buffered():
        if concurrency == 1:
            return {claim.key: one(claim) for claim in ordered}
        pool = _send_pool(kind.send_concurrency())
        # Each job runs in a copy of this context, so its call records land in our buffer.
        futures = {
            claim.key: pool.submit(contextvars.copy_context().run, _in_sender_thread, one, claim)
            for claim in ordered
        }
        return {key: future.result() for key, future in futures.items()}
