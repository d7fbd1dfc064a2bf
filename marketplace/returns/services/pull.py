"""Pulling a seller's returns' progress and the seller's own refunds.

Cost follows open work, not history
-----------------------------------
Per seller, and only when something can be found (``selectors``: open returns; orders a
seller may still refund), one listing of ``GET /refunds`` and one of ``GET /returns``:

* Refunds: ``refund_status=CREATED`` and the cursor. The reference has no update-time
  filter on refunds (``…/refunds/get-orders-refunds``), and a refund the seller corrects
  after a pause comes back ``CREATED`` with its old creation date: the set to decide is
  exactly the ``CREATED`` ones, bounded by open work (a seller with 10 000 completed
  refunds and 10 new ones makes the same requests as one with 100). Each is stored as the
  current version of its row and decided (``refund_versions.py``).
* Returns: ``updated_after`` (our choice; strictly after) and the cursor, no ``status``
  filter: ``REJECTED`` is no published state (a strict platform refuses the filter), and a
  state we do not know must still reach staff. The watermark is *our* clock at the start
  of the last complete listing, less ``PULL_CURSOR_OVERLAP``; what the overlap lists again
  is matched by a digest and costs nothing. A listed ``REFUNDED`` return not decided costs
  one more request (its amounts). Returns that need another look (a failed record, a
  decision dropped because the seller's amounts changed) are read by their own ``GET``.

One listing never stops the other: each runs and fails on its own, its failure kept on
``SellerReturnsPullState`` (staff see it) and retried at the next pull. One record never
stops its page: each is stored and decided in its own savepoint (``record_problems.py``).

Per seller one pull at a time: a lease on ``SellerReturnsPullState`` (conditional
UPDATE, no lock held during HTTP).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from marketplace.orders.models import Order
from marketplace.platform.order_source import OrderSourceClient
from marketplace.returns.models import (
    RecordKind,
    RefundStatus,
    Return,
    SellerReturnsPullState,
)
from marketplace.returns.selectors import (
    returns_to_reread,
    seller_has_open_returns,
    seller_may_get_refunds,
)
from marketplace.returns.services.decide import refund_decide
from marketplace.returns.services.record_problems import RecordGuard
from marketplace.returns.services.refund_versions import canonical_digest, refund_version_store
from marketplace.returns.services.return_progress import return_progress_store
from sellers.models import PlatformConnection
from sellers.token_source import order_client_for

logger = logging.getLogger(__name__)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The refunds to decide (the reference's open set).
REFUND_LIST_STATUSES = (RefundStatus.CREATED,)
# Returns to look at again by their own GET in one pull, at most.
REREAD_LIMIT = 50


@dataclass
class ReturnsPullResult:
    seller_id: int
    ran: bool = False
    requests: int = 0
    returns_listed: int = 0
    refunds_listed: int = 0
    changed: int = 0
    decided: int = 0
    record_failures: int = 0
    returns_error: str = ""
    refunds_error: str = ""

    @property
    def error(self) -> str:
        return "; ".join(
            f"{kind}: {text}"
            for kind, text in (("returns", self.returns_error), ("refunds", self.refunds_error))
            if text
        )


def digest(entry: dict[str, Any]) -> str:
    return canonical_digest(entry)


# --- the lease ----------------------------------------------------------------------------


def _claim(seller_id: int) -> tuple[str, SellerReturnsPullState] | None:
    now = timezone.now()
    try:
        state, _ = SellerReturnsPullState.objects.get_or_create(seller_id=seller_id)
    except IntegrityError:
        state = SellerReturnsPullState.objects.get(seller_id=seller_id)
    token = secrets.token_hex(16)
    taken = (
        SellerReturnsPullState.objects.filter(pk=state.pk)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(
            claim_token=token,
            lease_until=now + timedelta(seconds=settings.PULL_LEASE_SECONDS),
            updated_at=now,
        )
    )
    if not taken:
        return None
    state.refresh_from_db()
    return token, state


def _save(seller_id: int, token: str, **values: Any) -> None:
    SellerReturnsPullState.objects.filter(seller_id=seller_id, claim_token=token).update(
        updated_at=timezone.now(), **values
    )


# --- the pull -----------------------------------------------------------------------------


def seller_returns_pull(
    *, seller_id: int, client: OrderSourceClient | None = None
) -> ReturnsPullResult:
    """Read this seller's open refunds and changed returns, and decide them."""
    result = ReturnsPullResult(seller_id=seller_id)
    want_returns = seller_has_open_returns(seller_id=seller_id)
    want_refunds = seller_may_get_refunds(seller_id=seller_id)
    if not (want_returns or want_refunds):
        return result
    if client is None:
        connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
        if connection is None or not connection.is_live:
            result.returns_error = result.refunds_error = "not connected"
            return result
        client = order_client_for(connection, hold_wait=settings.PULL_HOLD_MAX_WAIT)
    claimed = _claim(seller_id)
    if claimed is None:
        return result
    token, state = claimed
    result.ran = True
    saved: dict[str, Any] = {}
    try:
        if want_refunds:
            result.refunds_error = _listing_run(
                lambda: _list_refunds(client, seller_id, result), seller_id, "refunds"
            )
            saved.update(_outcome("refunds", result.refunds_error))
        if want_returns:
            started = timezone.now()
            result.returns_error = _listing_run(
                lambda: _list_returns(client, seller_id, state.returns_watermark, result),
                seller_id,
                "returns",
            )
            saved.update(_outcome("returns", result.returns_error))
            if not result.returns_error:
                saved["returns_watermark"] = started
    finally:
        _save(
            seller_id,
            token,
            claim_token="",
            lease_until=None,
            last_finished_at=timezone.now(),
            last_error=result.error[:2000],
            **saved,
        )
    return result


def _listing_run(run: Callable[[], None], seller_id: int, kind: str) -> str:
    """Run one listing; its failure as text ("" when it went through). Any error: the
    other listing, and the seller's other work, go on."""
    try:
        run()
    except Exception as exc:
        text = f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"
        logger.warning("%s listing of seller %s failed: %s", kind, seller_id, text)
        return text
    return ""


def _outcome(kind: str, error: str) -> dict[str, Any]:
    if error:
        return {f"{kind}_error": error[:2000], f"{kind}_failed_at": timezone.now()}
    return {f"{kind}_error": "", f"{kind}_failed_at": None}


def _since(watermark: datetime | None) -> datetime:
    return watermark - settings.PULL_CURSOR_OVERLAP if watermark else EPOCH


def _pages(
    list_page: Callable[..., dict[str, Any]],
    key: str,
    filters: dict[str, Any],
    result: ReturnsPullResult,
) -> Iterator[tuple[list[dict[str, Any]], datetime]]:
    """Each page's entries (objects only) and when it was asked for."""
    cursor: str | None = None
    while True:
        asked = timezone.now()
        page = list_page(**filters, page_size=settings.PULL_PAGE_SIZE, cursor=cursor)
        result.requests += 1
        yield [e for e in page.get(key) or [] if isinstance(e, dict)], asked
        cursor = page.get("next_cursor") or None
        if not cursor:
            return


# --- refunds ----------------------------------------------------------------------------


def _list_refunds(client: OrderSourceClient, seller_id: int, result: ReturnsPullResult) -> None:
    guard = RecordGuard(seller_id=seller_id, kind=RecordKind.REFUND)
    filters = {"refund_status": list(REFUND_LIST_STATUSES)}
    for entries, asked in _pages(client.list_refunds, "refunds", filters, result):
        result.refunds_listed += len(entries)
        orders = {
            o.mp_order_number: o
            for o in Order.objects.filter(
                seller_id=seller_id,
                mp_order_number__in={str(e.get("mp_order_number") or "") for e in entries},
            )
        }
        to_decide: list[tuple[tuple[Any, ...], str, str, int]] = []
        for entry in entries:
            refund_id = str(entry.get("feedamp_refund_id") or "")
            order = orders.get(str(entry.get("mp_order_number") or ""))
            if not refund_id or order is None:
                continue  # not ours
            seen = digest(entry)
            ok, pk = guard.run(
                refund_id,
                seen,
                lambda entry=entry, order=order, asked=asked: refund_version_store(  # type: ignore[misc]
                    seller_id=seller_id, order=order, entry=entry, listed_at=asked
                ),
                mp_order_number=order.mp_order_number,
            )
            if ok and pk is not None:
                to_decide.append((_decide_key(entry), refund_id, seen, pk))
        # Decided in a fixed order (date created, then the platform's id), each on its own.
        for _, refund_id, seen, pk in sorted(to_decide):
            ok, _ = guard.run(refund_id, seen, lambda pk=pk: refund_decide(refund_pk=pk))  # type: ignore[misc]
            if ok:
                result.decided += 1
                result.changed += 1
    result.record_failures += guard.failed


def _decide_key(entry: dict[str, Any]) -> tuple[str, int, str]:
    refund_id = str(entry.get("feedamp_refund_id") or "")
    numeric = int(refund_id) if refund_id.isdigit() and len(refund_id) < 19 else 0
    return (str(entry.get("date_created") or "")[:10], numeric, refund_id)


# --- returns ----------------------------------------------------------------------------


def _list_returns(
    client: OrderSourceClient, seller_id: int, watermark: datetime | None, result: ReturnsPullResult
) -> None:
    guard = RecordGuard(seller_id=seller_id, kind=RecordKind.RETURN)
    seen_pks: set[int] = set()
    filters = {"updated_after": _since(watermark)}
    for entries, _ in _pages(client.list_returns, "returns", filters, result):
        ours = _our_returns(seller_id, entries)
        for entry in entries:
            result.returns_listed += 1
            key = (
                str(entry.get("mp_order_number") or ""),
                str(entry.get("mp_return_number") or ""),
            )
            return_request = ours.get(key)
            if return_request is not None:
                seen_pks.add(return_request.pk)
                _return_record(client, guard, return_request, entry, result)
    # Returns that need another look, by their own GET: a failed record (not a dead
    # letter), or a refunded return whose decision was dropped.
    again = returns_to_reread(
        seller_id=seller_id,
        keys=guard.retry_keys(),
        skip_keys=guard.dead_keys(),
        exclude=seen_pks,
        limit=REREAD_LIMIT,
    )
    for return_request in again:
        number = return_request.order.mp_order_number
        entry = client.get_return(number, return_request.mp_return_number)
        result.requests += 1
        _return_record(client, guard, return_request, entry, result)
    result.record_failures += guard.failed


def _return_record(
    client: OrderSourceClient,
    guard: RecordGuard,
    return_request: Return,
    entry: dict[str, Any],
    result: ReturnsPullResult,
) -> None:
    ok, outcome = guard.run(
        return_request.mp_return_number,
        digest(entry),
        lambda: return_progress_store(client, return_request, entry),
        mp_order_number=return_request.order.mp_order_number,
    )
    if ok and outcome is not None:
        changed, decided = outcome
        result.changed += int(changed)
        result.decided += int(decided)
        result.requests += int(decided)


def _our_returns(seller_id: int, entries: list[dict[str, Any]]) -> dict[tuple[str, str], Return]:
    numbers = {str(e.get("mp_return_number") or "") for e in entries}
    return {
        (r.order.mp_order_number, r.mp_return_number): r
        for r in Return.objects.filter(
            seller_id=seller_id, mp_return_number__in=numbers
        ).select_related("order")
    }


def sellers_returns_pull_fan_out() -> list[int]:
    """Queue a returns pull for each connected seller with something open, at once.

    Not on beat (the pull schedule brings returns along, ``pull_hooks.py``): a one-off
    catch-up for operators, the soak and tests."""
    from functools import partial

    from marketplace.returns.selectors import sellers_with_open_returns_or_refunds
    from marketplace.returns.tasks import seller_returns_pull_task

    seller_ids = list(
        sellers_with_open_returns_or_refunds()
        .filter(connection__state=PlatformConnection.State.CONNECTED)
        .values_list("pk", flat=True)
    )
    for seller_id in seller_ids:
        transaction.on_commit(partial(seller_returns_pull_task.delay, seller_id))
    return seller_ids
