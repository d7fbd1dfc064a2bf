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

Who calls it
------------
``marketplace.sync`` owns each seller's pull: it holds the seller's one state row (the
lease, the schedule, this listing's ``PullPosition``), makes the client, calls
``orders_pull`` and then the after-sale pull, and schedules the next. This module keeps
no state of its own: it reads the position it is given and hands each step's progress to
``keep``, which saves it while the pull's lease holds.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from marketplace.orders.models import Order, ValidationProblem
from marketplace.orders.services.fulfillment import (
    fulfillment_digest,
    order_fulfillment_pull,
    order_problems_report,
)
from marketplace.platform.calllog import platform_calls_buffered
from marketplace.platform.errors import PlatformError, PlatformRateLimited, PlatformRejected
from marketplace.platform.order_source import OrderSourceClient
from sellers.errors import SellerConnectionError

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
class PullPosition:
    """Where the seller's orders listing stands (``sync.SellerSync`` keeps it).

    ``cursor``: when the last completed pull asked for its first listing; the resume
    fields: an interrupted pull's page still to read, its filter and its start;
    ``retry_numbers``: orders to fetch on their own."""

    cursor: datetime | None = None
    resume_cursor: str = ""
    resume_since: datetime | None = None
    resume_started_at: datetime | None = None
    retry_numbers: list[str] = field(default_factory=list)


# Saves a position while the pull's lease holds (and extends it); False: the lease is lost.
KeepPosition = Callable[[PullPosition], bool]


class _PullStopped(Exception):
    """A page could not be read after its retries: the pull stops and resumes next time."""


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


def orders_pull(
    *, seller_id: int, client: OrderSourceClient, position: PullPosition, keep: KeepPosition
) -> PullResult:
    """Pull one seller's changed fulfillments from ``position``; each step's progress goes
    to ``keep``. A failure ends the pull with ``result.error`` (the next pull resumes)."""
    result = PullResult(seller_id=seller_id, ran=True)
    try:
        retry_numbers = _pull_retry_orders(client, seller_id, position, keep, result)
        _pull_listing(client, seller_id, position, keep, retry_numbers, result)
        result.reported += _report_pending_problems(client, seller_id)
    except (PlatformError, SellerConnectionError, _PullStopped) as exc:
        result.error = str(exc) if isinstance(exc, _PullStopped) else f"{type(exc).__name__}: {exc}"
        logger.warning("pull of seller %s stopped: %s", seller_id, result.error)
    return result


def _pull_retry_orders(
    client: OrderSourceClient,
    seller_id: int,
    position: PullPosition,
    keep: KeepPosition,
    result: PullResult,
) -> list[str]:
    """Orders an earlier pull could not read: fetch each on its own. Returns those that
    failed again."""
    if not position.retry_numbers:
        return []
    ours = {
        order.mp_order_number: order
        for order in Order.objects.filter(
            seller_id=seller_id, mp_order_number__in=position.retry_numbers
        ).only("id", "mp_order_number", "fulfillment_digest", "platform_seller_updated_at")
    }
    failed = []
    with platform_calls_buffered():
        for number in position.retry_numbers:
            order = ours.get(number)
            if order is not None and not _pull_order(client, order, None, result):
                failed.append(number)
    keep(replace(position, retry_numbers=failed))
    return failed


def _pull_listing(
    client: OrderSourceClient,
    seller_id: int,
    position: PullPosition,
    keep: KeepPosition,
    retry_numbers: list[str],
    result: PullResult,
) -> None:
    """List the orders changed since the cursor, page by page, resuming where an
    interrupted pull stopped; on completion move the cursor to this pull's start."""
    if position.resume_cursor and position.resume_since and position.resume_started_at:
        since, started, page_cursor = (
            position.resume_since,
            position.resume_started_at,
            position.resume_cursor,
        )
        result.resumed = True
    else:
        started = timezone.now()
        since = (position.cursor - settings.PULL_CURSOR_OVERLAP) if position.cursor else EPOCH
        page_cursor = None
    failed = list(retry_numbers)

    def at(page: str | None, *, cursor: datetime | None = position.cursor) -> PullPosition:
        """The position with ``page`` still to read (None: the listing starts over)."""
        return PullPosition(
            cursor=cursor,
            resume_cursor=page or "",
            resume_since=since if page else None,
            resume_started_at=started if page else None,
            retry_numbers=list(failed),
        )

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
            keep(at(page_cursor))
            tries = f" after {settings.PULL_ATTEMPTS} attempts" if exc.transient else ""
            raise _PullStopped(f"listing page failed{tries}: {type(exc).__name__}: {exc}") from exc
        with platform_calls_buffered():  # one call-log INSERT per page
            failed += _pull_page(client, seller_id, page, result)
        result.pages += 1
        sent_cursor, page_cursor = page_cursor, page.get("next_cursor") or None
        if page_cursor is not None and page_cursor == sent_cursor:
            # The same page again would come back for ever: stop, and start the listing
            # from the cursor time next time (nothing of this page is lost: it was read).
            keep(at(None))
            raise _PullStopped("the listing answered the cursor it was given; the pull stops")
        if len(failed) > settings.PULL_RETRY_NUMBERS_MAX:
            raise _PullStopped(f"{len(failed)} orders could not be read; the pull stops")
        if page_cursor:
            saved = keep(at(page_cursor))
        else:
            saved = keep(at(None, cursor=started))
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
    body = listed_fulfillment_body(entry) if entry else None
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


def listed_fulfillment_body(entry: dict[str, Any]) -> dict[str, Any] | None:
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
