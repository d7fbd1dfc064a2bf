"""The refunds listing of a pull: ``GET /refunds?refund_status=CREATED`` (the reference's
open set: no update-time filter exists), each refund stored as the current version of its
row (``refund_versions.py``) and decided, each in its own savepoint
(``record_problems.py``), in a fixed order (date created, then the platform's id)."""

from __future__ import annotations

from typing import Any

from marketplace.orders.models import Order
from marketplace.platform.order_source import OrderSourceClient
from marketplace.returns.models import RecordKind, RefundStatus
from marketplace.returns.services.decide import refund_decide
from marketplace.returns.services.pull_state import ReturnsPullResult, listing_pages
from marketplace.returns.services.record_problems import RecordGuard
from marketplace.returns.services.refund_versions import canonical_digest, refund_version_store

# The refunds to decide (the reference's open set).
REFUND_LIST_STATUSES = (RefundStatus.CREATED,)


def refunds_list(client: OrderSourceClient, seller_id: int, result: ReturnsPullResult) -> None:
    guard = RecordGuard(seller_id=seller_id, kind=RecordKind.REFUND)
    filters = {"refund_status": list(REFUND_LIST_STATUSES)}
    for entries, asked in listing_pages(client.list_refunds, "refunds", filters, result):
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
            seen = canonical_digest(entry)
            ok, pk = guard.run(
                refund_id,
                seen,
                lambda entry=entry, order=order, asked=asked: refund_version_store(  # type: ignore[misc]
                    seller_id=seller_id, order=order, entry=entry, listed_at=asked
                ),
                mp_order_number=order.mp_order_number,
                resolve=False,
            )
            if ok and pk is not None:
                to_decide.append((_decide_key(entry), refund_id, seen, pk))
            elif ok:
                guard.resolve(refund_id)  # nothing to decide: it went through
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
