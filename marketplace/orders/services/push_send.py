"""Sending a claimed push batch to the platform: ``PUT /orders/{n}`` per order.

No transaction is open here. Up to ``PUSH_SEND_CONCURRENCY`` calls are in flight at once
(threads kept for the life of the worker process, each with a keep-alive session). A call
is started only while it can finish before the batch's lease ends, and a 429 or a dead
grant holds the seller's calls not started yet. Every answer becomes an ``Outcome``;
``push_results.py`` records them.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import connections

from marketplace.orders.services.push_results import Claim, Outcome
from marketplace.platform.calllog import platform_calls_buffered
from marketplace.platform.errors import (
    PlatformAuthError,
    PlatformError,
    PlatformRateLimited,
    PlatformRejected,
)
from marketplace.platform.order_source import OrderSourceClient
from sellers.errors import ConnectionNotLive, SellerConnectionError, TokenRefreshUnavailable
from sellers.models import PlatformConnection
from sellers.token_source import order_client_for

logger = logging.getLogger(__name__)


def call_budget_seconds() -> float:
    """The longest one push can take: two attempts (401 → refresh → retry) and a refresh."""
    return 3 * (settings.PLATFORM_CONNECT_TIMEOUT + settings.PLATFORM_READ_TIMEOUT)


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
            _pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="push-send")
            _pool_size = size
        return _pool


def _in_sender_thread(send: Callable[[Claim], Outcome], claim: Claim) -> Outcome:
    try:
        return send(claim)
    finally:
        # A 401 (token refresh) or a lost grant reads the database from this thread:
        # do not leave that connection open in a pool thread.
        connections.close_all()


def push_send(claims: list[Claim]) -> dict[int, Outcome]:
    """PUT each claimed order; returns the outcome per order.

    Up to ``PUSH_SEND_CONCURRENCY`` calls are in flight at once (threads of this
    process): with a real platform a push mostly waits for the answer, and one call at
    a time per worker process would need hundreds of processes at peak rates.
    """
    # Stop starting calls while one more could outlive the lease: past it, another
    # worker may claim the order and two pushes of it could overlap.
    send_until = time.monotonic() + settings.PUSH_LEASE_SECONDS - call_budget_seconds() - 1.0
    clients: dict[int, OrderSourceClient] = {}
    for claim in claims:
        seller_id = claim.connection.seller_id
        if seller_id not in clients:
            clients[seller_id] = client = order_client_for(claim.connection)
            # Read each seller's token here, once: sender threads then need no database.
            with contextlib.suppress(Exception):  # _push_one meets and records the error
                client.access_token()
    # After a 429 or a dead connection, the seller's orders not sent yet are held: they
    # would meet the same answer (and a 429 asks us to slow down).
    held: dict[int, Outcome] = {}
    held_lock = threading.Lock()

    def send(claim: Claim) -> Outcome:
        seller_id = claim.connection.seller_id
        with held_lock:
            hold = held.get(seller_id)
        if hold is not None:
            return hold
        if time.monotonic() > send_until:
            return Outcome("unsent")
        outcome = _push_one(clients[seller_id], claim)
        if outcome.kind == "rate_limited":
            hold = Outcome(
                "rate_limited",
                message=f"not sent: the platform rate-limited this seller ({outcome.message})",
                status=outcome.status,
                retry_after=outcome.retry_after,
            )
        elif outcome.kind == "waiting":
            hold = outcome
        if hold is not None:
            with held_lock:
                held.setdefault(seller_id, hold)
        return outcome

    concurrency = max(1, min(settings.PUSH_SEND_CONCURRENCY, len(claims)))
    with platform_calls_buffered():
        if concurrency == 1:
            return {claim.order_id: send(claim) for claim in claims}
        pool = _send_pool(settings.PUSH_SEND_CONCURRENCY)
        # Each job runs in a copy of this context, so its call records land in our buffer.
        futures = {
            claim.order_id: pool.submit(
                contextvars.copy_context().run, _in_sender_thread, send, claim
            )
            for claim in claims
        }
        return {order_id: future.result() for order_id, future in futures.items()}


def _push_one(client: OrderSourceClient, claim: Claim) -> Outcome:
    try:
        response = client.put_order(claim.mp_order_number, claim.payload)
    except ConnectionNotLive as exc:  # includes ReauthorizationRequired
        return Outcome("waiting", message=str(exc) or "connection not live")
    except TokenRefreshUnavailable as exc:
        return Outcome(
            "transient", message=f"token refresh unavailable: {exc}", retry_after=exc.retry_after
        )
    except SellerConnectionError as exc:  # vault misconfigured and the like
        return Outcome("transient", message=str(exc))
    except PlatformRateLimited as exc:
        return Outcome(
            "rate_limited", message=exc.message, status=exc.status, retry_after=exc.retry_after
        )
    except PlatformRejected as exc:
        return Outcome("rejected", message=exc.message, status=exc.status)
    except PlatformAuthError as exc:
        # A 401 survived a forced refresh. If the grant is gone the vault has marked the
        # connection; otherwise treat it as transient (bounded by the dead letter).
        connection = PlatformConnection.objects.filter(pk=claim.connection.pk).first()
        live = connection is not None and connection.is_live
        return Outcome("transient" if live else "waiting", message=exc.message, status=exc.status)
    except PlatformError as exc:  # unavailable, timeout, malformed answer
        return Outcome(
            "transient", message=exc.message, status=exc.status, retry_after=exc.retry_after
        )
    except Exception as exc:
        logger.exception("unexpected error pushing order %s", claim.mp_order_number)
        return Outcome("transient", message=f"unexpected error: {exc!r}")
    return Outcome("ok", response=response)
