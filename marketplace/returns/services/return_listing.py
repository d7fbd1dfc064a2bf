"""The returns listing of a pull: ``GET /returns`` with ``updated_after`` (our choice,
strictly after; the watermark is our clock less ``PULL_CURSOR_OVERLAP``) and no
``status`` filter (``REJECTED`` is no published state, and a state we do not know must
still reach staff). Each listed return of ours is stored and, once refunded, decided in
its own savepoint (``return_progress.py``, ``record_problems.py``); returns that need
another look (a failed record, a decision dropped because the seller's amounts changed)
are read by their own ``GET``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from marketplace.platform.order_source import OrderSourceClient
from marketplace.returns.models import RecordKind, Return
from marketplace.returns.selectors import returns_to_reread
from marketplace.returns.services.pull_state import ReturnsPullResult, listing_pages
from marketplace.returns.services.record_problems import RecordGuard
from marketplace.returns.services.refund_versions import canonical_digest
from marketplace.returns.services.return_progress import return_progress_store

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Returns to look at again by their own GET in one pull, at most.
REREAD_LIMIT = 50


def _since(watermark: datetime | None) -> datetime:
    return watermark - settings.PULL_CURSOR_OVERLAP if watermark else EPOCH


def returns_list(
    client: OrderSourceClient, seller_id: int, watermark: datetime | None, result: ReturnsPullResult
) -> None:
    guard = RecordGuard(seller_id=seller_id, kind=RecordKind.RETURN)
    seen_pks: set[int] = set()
    filters = {"updated_after": _since(watermark)}
    for entries, _ in listing_pages(client.list_returns, "returns", filters, result):
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
        canonical_digest(entry),
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
