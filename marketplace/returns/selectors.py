"""Reads of returns, refunds and the ledger (pages and the pull schedule)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from marketplace.orders.models import MarketplaceState, Order, SyncEvent
from marketplace.returns.models import (
    Decision,
    PlatformStep,
    RefundLedgerEntry,
    Return,
    ReturnsRecordProblem,
    ReturnStatus,
    SellerRefund,
    StepStatus,
)
from sellers.models import Seller

OPEN_RETURN_STATUSES = (
    ReturnStatus.AWAITING_AUTHORIZATION,
    ReturnStatus.AUTHORIZED,
    ReturnStatus.REFUNDED,
)


def open_returns() -> QuerySet[Return]:
    """Returns whose progress we still need to read: not finished at the platform and
    not decided by us yet."""
    return Return.objects.filter(status__in=OPEN_RETURN_STATUSES, decision=Decision.NONE)


def _refund_watch_orders() -> QuerySet[Order]:
    """Orders a seller may still refund: placed within ``REFUND_WATCH_DAYS`` and past
    PENDING (a refund follows a sale the seller took on)."""
    since = timezone.now() - timedelta(days=settings.REFUND_WATCH_DAYS)
    return Order.objects.filter(created_at__gte=since).exclude(state=MarketplaceState.PENDING)


def seller_has_open_returns(*, seller_id: int) -> bool:
    return open_returns().filter(seller_id=seller_id).exists()


def seller_open_returns_reason(seller_id: int) -> str:
    """ "open returns" while the seller has an undecided return (``marketplace.sync``
    pulls them at the short interval), else ""."""
    return "open returns" if seller_has_open_returns(seller_id=seller_id) else ""


def returns_to_reread(
    *,
    seller_id: int,
    keys: Iterable[str],
    skip_keys: Iterable[str],
    exclude: Iterable[int],
    limit: int,
) -> list[Return]:
    """Returns of this seller to read again by their own GET: those whose record failed
    (``keys``, not dead letters) and refunded ones whose decision was dropped."""
    return list(
        Return.objects.filter(seller_id=seller_id)
        .filter(
            Q(mp_return_number__in=list(keys))
            | Q(status=ReturnStatus.REFUNDED, decision=Decision.NONE)
        )
        .exclude(pk__in=list(exclude))
        .exclude(mp_return_number__in=list(skip_keys))
        .select_related("order")
        .order_by("id")[:limit]
    )


def overdue_returns(*, seller_id: int | None = None, now: Any = None) -> QuerySet[Return]:
    """Returns still ``AWAITING_AUTHORIZATION`` more than ``RETURN_AUTHORIZATION_DAYS``
    after the buyer asked: under the reference's reading a seller's refusal sends
    nothing, so this list is how staff and the seller learn of it."""
    today = timezone.localdate(now or timezone.now())
    query = Return.objects.filter(
        status=ReturnStatus.AWAITING_AUTHORIZATION,
        decision=Decision.NONE,
        request_date__lt=today - timedelta(days=settings.RETURN_AUTHORIZATION_DAYS),
    )
    if seller_id is not None:
        query = query.filter(seller_id=seller_id)
    return query.select_related("order", "seller__user").order_by("request_date", "id")


def paused_refunds(*, seller_id: int | None = None) -> QuerySet[SellerRefund]:
    """Refunds we refused (their current version): paused by our errors, waiting for the
    seller to correct them, or being paused (the errors call on its way). Unpaid."""
    query = SellerRefund.objects.filter(decision=Decision.REFUSED)
    if seller_id is not None:
        query = query.filter(seller_id=seller_id)
    return query.select_related("order", "seller__user").order_by("paused_at", "id")


def seller_may_get_refunds(*, seller_id: int) -> bool:
    return _refund_watch_orders().filter(seller_id=seller_id).exists()


def seller_has_open_returns_or_refunds(*, seller_id: int) -> bool:
    """Whether a pull of this seller's returns and refunds could find anything."""
    return seller_has_open_returns(seller_id=seller_id) or seller_may_get_refunds(
        seller_id=seller_id
    )


def sellers_with_open_returns_or_refunds() -> QuerySet[Seller]:
    """The sellers ``seller_has_open_returns_or_refunds`` holds for (one query), for a
    pull schedule."""
    return Seller.objects.filter(
        Exists(open_returns().filter(seller_id=OuterRef("pk")))
        | Exists(_refund_watch_orders().filter(seller_id=OuterRef("pk")))
    ).order_by("pk")


# --- pages ------------------------------------------------------------------------------


def order_returns_and_refunds(*, order_id: int) -> dict[str, Any]:
    """An order's returns (with lines), sellers' refunds (with lines), ledger and steps."""
    returns = list(
        Return.objects.filter(order_id=order_id)
        .prefetch_related("lines__order_line", "steps")
        .order_by("created_at", "id")
    )
    refunds = list(
        SellerRefund.objects.filter(order_id=order_id)
        .prefetch_related("lines", "steps")
        .order_by("created_at", "id")
    )
    ledger = list(
        RefundLedgerEntry.objects.filter(order_id=order_id)
        .select_related("order_line", "refund", "return_request")
        .order_by("created_at", "id")
    )
    return {"returns": returns, "refunds": refunds, "ledger": ledger}


def order_timeline_entries(*, after_sale: dict[str, Any]) -> list[dict[str, Any]]:
    """Returns and refunds (``order_returns_and_refunds``) as timeline entries (``at``,
    ``title``, ``text``, ``tone``) to merge with the order's own events."""
    data = after_sale
    entries: list[dict[str, Any]] = []
    for ret in data["returns"]:
        entries.append(
            {
                "at": ret.created_at,
                "title": f"Return {ret.mp_return_number} requested",
                "text": ", ".join(
                    f"{line.quantity} x line {line.order_line.mp_line_number}"
                    for line in ret.lines.all()
                ),
                "tone": "info",
            }
        )
        if ret.decided_at:
            entries.append(
                {
                    "at": ret.decided_at,
                    "title": f"Return {ret.mp_return_number} "
                    + ("accepted" if ret.decision == Decision.ACCEPTED else "refused"),
                    "text": "; ".join(e.get("message", "") for e in ret.errors or []),
                    "tone": "ok" if ret.decision == Decision.ACCEPTED else "bad",
                }
            )
        elif ret.status == ReturnStatus.REJECTED:
            entries.append(
                {
                    "at": ret.pulled_at or ret.updated_at,
                    "title": f"Return {ret.mp_return_number} rejected by the seller",
                    "text": ret.notes,
                    "tone": "warn",
                }
            )
    for refund in data["refunds"]:
        entries.append(
            {
                "at": refund.date_created or refund.created_at,
                "title": f"Seller refund {refund.refund_id} posted",
                "text": refund.notes,
                "tone": "info",
            }
        )
        if refund.decided_at:
            entries.append(
                {
                    "at": refund.decided_at,
                    "title": f"Seller refund {refund.refund_id} "
                    + (
                        "accepted"
                        if refund.decision == Decision.ACCEPTED
                        else "refused: paused for the seller to correct it"
                    ),
                    "text": "; ".join(e.get("message", "") for e in refund.errors or []),
                    "tone": "ok" if refund.decision == Decision.ACCEPTED else "bad",
                }
            )
    return entries


def order_timeline(
    *, after_sale: dict[str, Any], events: Iterable[SyncEvent], limit: int = 200
) -> list[dict[str, Any]]:
    """The order's own events (already read) and its returns' and refunds' (from
    ``order_returns_and_refunds``), newest first: no query of its own."""
    merged = [
        {
            "at": event.created_at,
            "title": event.get_kind_display(),
            "text": event.message,
            "tone": "",
        }
        for event in events
    ] + order_timeline_entries(after_sale=after_sale)
    return sorted(merged, key=lambda entry: entry["at"], reverse=True)[:limit]


def returns_waiting(*, now: Any = None) -> dict[str, Any]:
    """What waits on someone: returns the seller has not authorized or refunded by their
    respond date,
    refunds and returns we refused, steps that need a person, ledger entries not paid."""
    now = now or timezone.now()
    limit = 200
    return {
        "unanswered": list(
            Return.objects.filter(
                status__in=[ReturnStatus.AWAITING_AUTHORIZATION, ReturnStatus.AUTHORIZED],
                decision=Decision.NONE,
                respond_date__lt=timezone.localdate(now),
            )
            .select_related("order", "seller__user")
            .order_by("respond_date", "id")[:limit]
        ),
        "overdue": list(overdue_returns(now=now)[:limit]),
        "paused_refunds": list(paused_refunds().prefetch_related("lines")[:limit]),
        "unknown_states": list(
            Return.objects.exclude(status__in=ReturnStatus.values)
            .select_related("order", "seller__user")
            .order_by("-updated_at", "-id")[:limit]
        ),
        "record_problems": list(
            ReturnsRecordProblem.objects.filter(resolved_at__isnull=True)
            .select_related("seller__user")
            .order_by("-last_failed_at", "-id")[:limit]
        ),
        "refused_returns": list(
            Return.objects.filter(decision=Decision.REFUSED)
            .select_related("order", "seller__user")
            .order_by("-decided_at", "-id")[:limit]
        ),
        "stuck_steps": list(
            PlatformStep.objects.filter(
                Q(status=StepStatus.FAILED)
                | Q(status=StepStatus.RETRYING, failures__gte=1)
                # a return waiting an hour for its order to reach the platform
                | Q(status=StepStatus.PENDING, created_at__lt=now - timedelta(hours=1))
            )
            .select_related("return_request__order", "refund__order")
            .order_by("-updated_at", "-id")[:limit]
        ),
        "unpaid": list(
            RefundLedgerEntry.objects.filter(paid_out_at__isnull=True)
            .select_related("order", "order_line", "refund", "return_request")
            .order_by("created_at", "id")[:limit]
        ),
    }


def seller_returns_waiting(*, seller_id: int) -> dict[str, Any]:
    """The seller portal's list: buyers' returns waiting for the seller's authorization
    (overdue ones apart), refunds paused for the seller to correct, returns refused."""
    return {
        "overdue": list(overdue_returns(seller_id=seller_id).prefetch_related("lines__order_line")),
        "paused_refunds": list(paused_refunds(seller_id=seller_id).prefetch_related("lines")),
        "awaiting": list(
            Return.objects.filter(
                seller_id=seller_id,
                status=ReturnStatus.AWAITING_AUTHORIZATION,
                decision=Decision.NONE,
            )
            .select_related("order")
            .prefetch_related("lines__order_line")
            .order_by("respond_date", "id")
        ),
        "refused_returns": list(
            Return.objects.filter(seller_id=seller_id, decision=Decision.REFUSED)
            .select_related("order")
            .order_by("-decided_at", "-id")[:100]
        ),
    }
