"""Pulling the sellers' fulfillments: list changed orders, store, report, settle.

Cost follows change, not history
--------------------------------
The contract's listing filter is ``seller_updated_after``, but its order shape carries no
per-order update time. So the cursor is *our* clock: the moment a pull asked for its
first listing, saved only when that pull completes; the next pull lists orders changed
on or after it (the platform's reading of the filter), less ``PULL_CURSOR_OVERLAP`` (clock
skew between us and the platform), sent in whole UTC seconds (``platform.dates.to_wire``
truncates, so the filter only ever moves earlier). An order the seller changed while a
pull ran, or at the boundary's very second, is listed again by the next one: harmless,
its digest is unchanged. Pages follow the platform's opaque ``next_cursor`` (null, absent
or ``""`` ends the listing), never a time taken from an order, so many orders changed in
the same second cannot hold the pull on one page; a ``next_cursor`` equal to the one sent
stops the pull rather than loop.

Each listed order carries its ``fulfillments`` (the contract's order shape); their digest
against the stored one decides whether anything changed, so an unchanged order re-listed
by the overlap costs no request, no write and no event. ``/fulfillments`` is fetched only
for a listed order that lacks them. If the platform does send ``seller_updated_at``, an
equal stored value skips the order even sooner; it is never required.

Surviving faults
----------------
A failed page or order is retried on its own with backoff (``PULL_ATTEMPTS``), sleeping
out the seller's embargo (a 429/503 with a wait) when it is short. An order that still
fails is remembered (``retry_numbers``) and fetched on its own by the next pull while
this one goes on. A page that still fails stops the pull and keeps the listing's cursor
of that page: the next pull resumes there instead of starting again from the oldest
change. A seller whose pulls keep failing shows on the dashboard
(``consecutive_failures``).

Per seller, one pull at a time: a lease on the seller's ``SellerPullState`` row, taken
with a conditional UPDATE (no lock held during HTTP).

When
----
Each seller's next pull is a row (``sellers.PullSchedule``): a pull ends by scheduling
the next from what it found (``sellers.pull_schedule``: open work → the interval, idle →
a doubling wait up to a ceiling, failing → a bounded backoff), and beat's fan-out queues
only the sellers that are due, claimed through the index in bounded batches.
"""

from __future__ import annotations

import logging
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from marketplace.orders.models import Order, SellerPullState, ValidationProblem
from marketplace.orders.services.fulfillment import (
    fulfillment_digest,
    order_fulfillment_pull,
    order_problems_report,
)
from marketplace.platform.calllog import platform_calls_buffered
from marketplace.platform.errors import PlatformError, PlatformRateLimited, PlatformRejected
from marketplace.platform.order_source import OrderSourceClient
from sellers.errors import SellerConnectionError
from sellers.models import PlatformConnection
from sellers.pull_schedule import (
    after_pull_run,
    open_work_reasons,
    pull_schedule_after_pull,
    pull_schedule_claim_due,
)
from sellers.token_source import order_client_for

logger = logging.getLogger(__name__)

# The first pull of a seller: every order the seller ever touched.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

T = TypeVar("T")


@dataclass
class PullResult:
    seller_id: int
    ran: bool = False
    resumed: bool = False
    completed: bool = False
    pages: int = 0
    listed: int = 0
    unchanged: int = 0
    fetched: int = 0
    changed: int = 0
    reported: int = 0
    settled: int = 0
    retried: int = 0  # page or order attempts repeated within this pull
    failed_orders: list[str] = field(default_factory=list)
    error: str = ""
    settled_orders: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Claim:
    token: str
    cursor: datetime | None
    resume_cursor: str
    resume_since: datetime | None
    resume_started_at: datetime | None
    retry_numbers: list[str]


class _PullStopped(Exception):
    """A page could not be read after its retries: the pull stops and resumes next time."""


# --- the seller's pull state ------------------------------------------------------------


def _pull_claim(*, seller_id: int) -> _Claim | None:
    now = timezone.now()
    try:
        state, _ = SellerPullState.objects.get_or_create(seller_id=seller_id)
    except IntegrityError:  # created concurrently
        state = SellerPullState.objects.get(seller_id=seller_id)
    token = secrets.token_hex(16)
    taken = (
        SellerPullState.objects.filter(pk=state.pk)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(
            claim_token=token,
            lease_until=now + timedelta(seconds=settings.PULL_LEASE_SECONDS),
            last_started_at=now,
            updated_at=now,
        )
    )
    if not taken:
        return None
    state.refresh_from_db()
    return _Claim(
        token=token,
        cursor=state.cursor,
        resume_cursor=state.resume_cursor,
        resume_since=state.resume_since,
        resume_started_at=state.resume_started_at,
        retry_numbers=[str(n) for n in state.retry_numbers or []],
    )


def _pull_save(*, seller_id: int, token: str, **values: Any) -> bool:
    """Save progress and extend the lease, only while we still hold it."""
    now = timezone.now()
    return bool(
        SellerPullState.objects.filter(seller_id=seller_id, claim_token=token).update(
            lease_until=now + timedelta(seconds=settings.PULL_LEASE_SECONDS),
            updated_at=now,
            **values,
        )
    )


def _pull_release(*, seller_id: int, token: str, result: PullResult) -> None:
    now = timezone.now()
    values: dict[str, Any] = {
        "claim_token": "",
        "lease_until": None,
        "last_finished_at": now,
        "last_error": result.error[:2000],
        "updated_at": now,
    }
    if result.error:
        values["consecutive_failures"] = F("consecutive_failures") + 1
    else:
        values["last_success_at"] = now
        values["consecutive_failures"] = 0
    SellerPullState.objects.filter(seller_id=seller_id, claim_token=token).update(**values)


# --- retries ------------------------------------------------------------------------------


def _with_retries(call: Callable[[], T], result: PullResult) -> T:
    """``call()``, tried up to ``PULL_ATTEMPTS`` times on transient platform errors.

    The client sleeps out a short embargo itself; a longer one (PlatformRateLimited that
    the client raised without sending) ends the retries at once: the wait is the
    platform's to set, and the next pull comes after it.
    """
    attempts = max(1, settings.PULL_ATTEMPTS)
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except PlatformError as exc:
            held = isinstance(exc, PlatformRateLimited) and (exc.retry_after or 0) > (
                settings.PULL_HOLD_MAX_WAIT
            )
            if not exc.transient or held or attempt == attempts:
                raise
            result.retried += 1
            nominal = settings.PULL_RETRY_BASE * 2 ** (attempt - 1)
            # The embargo (if the answer set one) is honoured by the client before the
            # next attempt; this backoff spreads retries after plain failures.
            time.sleep(nominal / 2 + random.random() * nominal / 2)
    raise AssertionError("unreachable")


# --- the pull -----------------------------------------------------------------------------


def seller_pull(*, seller_id: int) -> PullResult:
    """Pull one seller's changed fulfillments (skipped if a pull of this seller runs)."""
    result = PullResult(seller_id=seller_id)
    started = timezone.now()
    connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
    if connection is None or not connection.is_live:
        result.error = "not connected"
        # Off the schedule until a reconnect (sellers.services makes it due again).
        pull_schedule_after_pull(seller_id=seller_id, connected=False)
        return result
    claim = _pull_claim(seller_id=seller_id)
    if claim is None:
        return result  # another pull of this seller runs; it schedules the next one
    result.ran = True
    client = order_client_for(connection, hold_wait=settings.PULL_HOLD_MAX_WAIT)
    try:
        retry_numbers = _pull_retry_orders(client, seller_id, claim, result)
        _pull_listing(client, seller_id, claim, retry_numbers, result)
        result.reported += _report_pending_problems(client, seller_id)
    except (PlatformError, SellerConnectionError, _PullStopped) as exc:
        result.error = str(exc) if isinstance(exc, _PullStopped) else f"{type(exc).__name__}: {exc}"
        logger.warning("pull of seller %s stopped: %s", seller_id, result.error)
    finally:
        _pull_release(seller_id=seller_id, token=claim.token, result=result)
        pull_schedule_after_pull(
            seller_id=seller_id,
            failed=bool(result.error),
            reasons=_open_work(result),
            started_at=started,
        )
    if not result.error:
        after_pull_run(seller_id=seller_id)  # returns and refunds: their own listing
    return result


def _open_work(result: PullResult) -> list[str]:
    """Why the seller's next pull should come soon: the registered rules (open orders;
    returns and refunds add theirs) and what this pull itself saw."""
    reasons = open_work_reasons(seller_id=result.seller_id)
    if result.changed:
        reasons.append("recent change")
    if result.failed_orders:
        reasons.append("orders to read again")
    return reasons


def _pull_retry_orders(
    client: OrderSourceClient, seller_id: int, claim: _Claim, result: PullResult
) -> list[str]:
    """Orders an earlier pull could not read: fetch each on its own. Returns those that
    failed again."""
    if not claim.retry_numbers:
        return []
    ours = {
        order.mp_order_number: order
        for order in Order.objects.filter(
            seller_id=seller_id, mp_order_number__in=claim.retry_numbers
        ).only("id", "mp_order_number", "fulfillment_digest", "platform_seller_updated_at")
    }
    failed = []
    with platform_calls_buffered():
        for number in claim.retry_numbers:
            order = ours.get(number)
            if order is not None and not _pull_order(client, order, None, result):
                failed.append(number)
    _pull_save(seller_id=seller_id, token=claim.token, retry_numbers=failed)
    return failed


def _pull_listing(
    client: OrderSourceClient,
    seller_id: int,
    claim: _Claim,
    retry_numbers: list[str],
    result: PullResult,
) -> None:
    """List the orders changed since the cursor, page by page, resuming where an
    interrupted pull stopped; on completion move the cursor to this pull's start."""
    if claim.resume_cursor and claim.resume_since and claim.resume_started_at:
        since, started, page_cursor = (
            claim.resume_since,
            claim.resume_started_at,
            claim.resume_cursor,
        )
        result.resumed = True
    else:
        started = timezone.now()
        since = (claim.cursor - settings.PULL_CURSOR_OVERLAP) if claim.cursor else EPOCH
        page_cursor = None
    failed = list(retry_numbers)
    while True:
        try:
            page = _with_retries(
                partial(
                    client.list_orders,
                    seller_updated_after=since,
                    page_size=settings.PULL_PAGE_SIZE,
                    cursor=page_cursor,
                ),
                result,
            )
        except PlatformRejected:
            if page_cursor is None or not result.resumed:
                raise
            # The saved cursor of an interrupted pull is no longer accepted (it is the
            # platform's, opaque, and may expire): list from the start of that pull again.
            logger.info("pull of seller %s: saved listing cursor refused, starting over", seller_id)
            page_cursor, result.resumed = None, False
            continue
        except PlatformError as exc:
            # Keep what this pull did and where it stands: the next one resumes here.
            _pull_save(
                seller_id=seller_id,
                token=claim.token,
                resume_cursor=page_cursor or "",
                resume_since=since if page_cursor else None,
                resume_started_at=started if page_cursor else None,
                retry_numbers=failed,
            )
            tries = f" after {settings.PULL_ATTEMPTS} attempts" if exc.transient else ""
            raise _PullStopped(f"listing page failed{tries}: {type(exc).__name__}: {exc}") from exc
        with platform_calls_buffered():  # one call-log INSERT per page
            failed += _pull_page(client, seller_id, page, result)
        result.pages += 1
        sent_cursor, page_cursor = page_cursor, page.get("next_cursor") or None
        if page_cursor is not None and page_cursor == sent_cursor:
            # The same page again would come back for ever: stop, and start the listing
            # from the cursor time next time (nothing of this page is lost: it was read).
            _pull_save(seller_id=seller_id, token=claim.token, resume_cursor="",
                       resume_since=None, resume_started_at=None, retry_numbers=failed)  # fmt: skip
            raise _PullStopped("the listing answered the cursor it was given; the pull stops")
        if len(failed) > settings.PULL_RETRY_NUMBERS_MAX:
            raise _PullStopped(f"{len(failed)} orders could not be read; the pull stops")
        if page_cursor:
            saved = _pull_save(
                seller_id=seller_id,
                token=claim.token,
                resume_cursor=page_cursor,
                resume_since=since,
                resume_started_at=started,
                retry_numbers=failed,
            )
        else:
            saved = _pull_save(
                seller_id=seller_id,
                token=claim.token,
                cursor=started,
                resume_cursor="",
                resume_since=None,
                resume_started_at=None,
                retry_numbers=failed,
            )
            result.completed = saved
        if not saved:
            raise _PullStopped("lost the pull lease")
        if not page_cursor:
            return


def _pull_page(
    client: OrderSourceClient, seller_id: int, page: dict[str, Any], result: PullResult
) -> list[str]:
    """Process one listing page; returns the numbers of the orders that failed."""
    entries = [entry for entry in page.get("orders") or [] if isinstance(entry, dict)]
    # One query for the page's orders, not one per listed order.
    ours = {
        order.mp_order_number: order
        for order in Order.objects.filter(
            seller_id=seller_id,
            mp_order_number__in=[str(e.get("mp_order_number") or "") for e in entries],
        ).only("id", "mp_order_number", "fulfillment_digest", "platform_seller_updated_at")
    }
    failed = []
    for entry in entries:
        result.listed += 1
        order = ours.get(str(entry.get("mp_order_number") or ""))
        if order is None:
            continue  # not ours (placed by another marketplace or deleted here)
        if not _pull_order(client, order, entry, result):
            failed.append(order.mp_order_number)
    return failed


def _pull_order(
    client: OrderSourceClient, order: Order, entry: dict[str, Any] | None, result: PullResult
) -> bool:
    """Bring one order's fulfillment up to date; False if it could not be read or stored."""
    raw_updated = entry.get("seller_updated_at") if entry else None
    updated = parse_datetime(raw_updated) if isinstance(raw_updated, str) else None
    if updated is not None and order.platform_seller_updated_at == updated:
        result.unchanged += 1
        return True  # the platform says so itself (it need not send this field)
    body = _listed_fulfillment(entry) if entry else None
    try:
        if body is None:
            body = _with_retries(lambda: client.get_fulfillments(order.mp_order_number), result)
            result.fetched += 1
        if fulfillment_digest(body) == order.fulfillment_digest and updated is None:
            result.unchanged += 1
            return True  # re-listed by the overlap, or changed and changed back
        # Store, record the PULLED event and settle in one transaction (no HTTP inside).
        outcome = order_fulfillment_pull(
            order_id=order.id,
            body=body,
            seller_updated_at=updated,
            listed_seller_updated_at=raw_updated,
        )
    except (PlatformError, SellerConnectionError) as exc:
        if isinstance(exc, SellerConnectionError) or getattr(exc, "status", None) == 401:
            raise  # the connection itself is gone: every other order would fail the same
        logger.warning("pull: order %s not read: %s", order.mp_order_number, exc)
        result.failed_orders.append(order.mp_order_number)
        return False
    if outcome.changed:
        result.changed += 1
    else:
        result.unchanged += 1
    if outcome.report_due:
        result.reported += order_problems_report(order_id=order.id, client=client)
    if outcome.settled:
        result.settled += 1
        result.settled_orders.append(order.mp_order_number)
    return True


def _listed_fulfillment(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The fulfillment body as ``/fulfillments`` would give it, from a listed order, or
    None when the listing does not carry it (then it is fetched)."""
    lines = entry.get("fulfillments")
    if not isinstance(lines, list):
        return None
    return {"status": _fulfillment_status(lines), "fulfillments": lines}


def _fulfillment_status(lines: list[Any]) -> str:
    """The order's fulfillment status from its lines (the listing's ``status`` is the
    order's status, in other words)."""
    dicts = [line for line in lines if isinstance(line, dict)]
    pending = [
        (line.get("pending") or {}).get("quantity")
        if isinstance(line.get("pending"), dict)
        else None
        for line in dicts
    ]
    if dicts and all(p == 0 for p in pending):
        return "COMPLETE"
    if any(line.get("shipments") or line.get("cancellations") for line in dicts):
        return "PARTIALLY_FULFILLED"
    return "PENDING"


def _report_pending_problems(client: OrderSourceClient, seller_id: int, limit: int = 100) -> int:
    """Problems whose report failed earlier (their order may not be re-listed)."""
    order_ids = list(
        ValidationProblem.objects.filter(
            order__seller_id=seller_id, reported_at__isnull=True, resolved_at__isnull=True
        )
        .values_list("order_id", flat=True)
        .distinct()[:limit]
    )
    return sum(order_problems_report(order_id=order_id, client=client) for order_id in order_ids)


def sellers_pull_fan_out(*, batch: int | None = None, max_batches: int | None = None) -> list[int]:
    """Queue one pull per *due* seller; returns their ids.

    Due sellers are claimed through ``next_pull_at``'s index in batches of ``batch`` (one
    statement each, which moves them to a lease), at most ``max_batches`` a tick: the cost
    follows the sellers due, never the sellers connected. What is left stays due, oldest
    first, for the next tick.
    """
    from marketplace.orders.tasks import seller_pull_task

    batch = batch or settings.PULL_FAN_OUT_BATCH
    max_batches = max_batches or settings.PULL_FAN_OUT_MAX_BATCHES
    queued: list[int] = []
    for _ in range(max_batches):
        seller_ids = pull_schedule_claim_due(
            limit=batch, ahead_seconds=settings.PULL_FAN_OUT_EVERY_SECONDS / 2
        )
        for seller_id in seller_ids:
            transaction.on_commit(partial(seller_pull_task.delay, seller_id))
        queued += seller_ids
        if len(seller_ids) < batch:
            break
    return queued
