"""Returns and refunds as the seller reads them: open or done, with their amounts, on the
order's page and in the Returns history. Read-only over ``marketplace.returns`` (its
rules and its pages are that app's; this only shapes what the seller sees).

"Done" is what no longer changes: a return completed or rejected at the platform, or
refused by the marketplace; a seller's refund once the marketplace decided it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from django.db.models import Q, QuerySet

from marketplace.orders.models import Order
from marketplace.returns.models import (
    Decision,
    RefundLedgerEntry,
    Return,
    ReturnStatus,
    SellerRefund,
)
from marketplace.returns.selectors import order_returns_and_refunds

ZERO = Decimal("0")
DONE_RETURN = Q(status__in=[ReturnStatus.COMPLETED, ReturnStatus.REJECTED]) | Q(
    decision=Decision.REFUSED
)

# The seller's words for where a return stands (the platform's status, or our refusal).
RETURN_WORDS: dict[str, str] = {
    ReturnStatus.AWAITING_AUTHORIZATION: "Waiting for your answer",
    ReturnStatus.AUTHORIZED: "Authorized: waiting for the parcel",
    ReturnStatus.REFUNDED: "Refunded by you: being checked",
    ReturnStatus.COMPLETED: "Completed",
    ReturnStatus.REJECTED: "Rejected by you",
}


@dataclass
class ReturnView:
    ret: Return
    currency: str
    words: str
    done: bool
    requested: Decimal
    refunded: Decimal
    lines: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RefundView:
    refund: SellerRefund
    currency: str
    words: str
    done: bool
    amount: Decimal
    refunded: Decimal


def return_words(ret: Return) -> str:
    if ret.decision == Decision.REFUSED:
        return "Refused by the marketplace"
    return RETURN_WORDS.get(ret.status, ret.get_status_display())


def return_is_done(ret: Return) -> bool:
    return (
        ret.status in (ReturnStatus.COMPLETED, ReturnStatus.REJECTED)
        or ret.decision == Decision.REFUSED
    )


def _ledger_by(entries: list[RefundLedgerEntry], attr: str) -> dict[int, Decimal]:
    sums: dict[int, Decimal] = defaultdict(lambda: ZERO)
    for entry in entries:
        key = getattr(entry, attr)
        if key is not None:
            sums[key] += entry.amount
    return sums


def return_view(ret: Return, *, currency: str, refunded: Decimal) -> ReturnView:
    lines = []
    requested = ZERO
    for line in ret.lines.all():
        asked = line.requested_refund_principal + line.requested_refund_tax
        requested += asked
        lines.append(
            {
                "quantity": line.quantity,
                "product": line.order_line.product_name,
                "mp_line_number": line.order_line.mp_line_number,
                "requested": asked,
            }
        )
    return ReturnView(
        ret=ret,
        currency=currency,
        words=return_words(ret),
        done=return_is_done(ret),
        requested=requested,
        refunded=refunded,
        lines=lines,
    )


def refund_view(refund: SellerRefund, *, currency: str, refunded: Decimal) -> RefundView:
    if refund.decision == Decision.ACCEPTED:
        words = "Accepted: paid back to the buyer"
    elif refund.decision == Decision.REFUSED:
        words = "Refused by the marketplace"
    else:
        words = "Being checked"
    return RefundView(
        refund=refund,
        currency=currency,
        words=words,
        done=refund.decision != Decision.NONE,
        amount=sum((line.takes for line in refund.lines.all()), start=ZERO),
        refunded=refunded,
    )


def order_after_sale(*, order: Order) -> dict[str, Any]:
    """The order's returns and the seller's refunds, each with its amounts."""
    data = order_returns_and_refunds(order_id=order.pk)
    by_return = _ledger_by(data["ledger"], "return_request_id")
    by_refund = _ledger_by(data["ledger"], "refund_id")
    returns = [
        return_view(ret, currency=order.currency, refunded=by_return[ret.pk])
        for ret in data["returns"]
    ]
    refunds = [
        refund_view(refund, currency=order.currency, refunded=by_refund[refund.pk])
        for refund in data["refunds"]
    ]
    return {
        "returns": returns,
        "refunds": refunds,
        "refunded": sum((entry.amount for entry in data["ledger"]), start=ZERO),
        "open_count": sum(not r.done for r in returns) + sum(not r.done for r in refunds),
    }


def seller_return_history(
    *,
    seller_id: int,
    state: str = "",
    q: str = "",
    since: date | None = None,
    until: date | None = None,
) -> QuerySet[Return]:
    """The seller's returns, newest first: ``state`` "open" or "done" (else all),
    an order or return number, and the buyer's request date within ``since``..``until``."""
    returns = (
        Return.objects.filter(seller_id=seller_id)
        .select_related("order")
        .prefetch_related("lines__order_line", "ledger")
        .order_by("-request_date", "-id")
    )
    if state == "open":
        returns = returns.exclude(DONE_RETURN)
    elif state == "done":
        returns = returns.filter(DONE_RETURN)
    if q:
        returns = returns.filter(
            Q(order__mp_order_number__icontains=q) | Q(mp_return_number__icontains=q)
        )
    if since:
        returns = returns.filter(request_date__gte=since)
    if until:
        returns = returns.filter(request_date__lte=until)
    return returns


def history_rows(returns: list[Return]) -> list[ReturnView]:
    """A page of ``seller_return_history`` with amounts (its prefetched ledger)."""
    return [
        return_view(
            ret,
            currency=ret.order.currency,
            refunded=sum((entry.amount for entry in ret.ledger.all()), start=ZERO),
        )
        for ret in returns
    ]


def seller_refund_history(*, seller_id: int, q: str = "") -> QuerySet[SellerRefund]:
    refunds = (
        SellerRefund.objects.filter(seller_id=seller_id)
        .select_related("order")
        .prefetch_related("lines", "ledger")
        .order_by("-created_at", "-id")
    )
    if q:
        refunds = refunds.filter(order__mp_order_number__icontains=q)
    return refunds


def refund_rows(refunds: list[SellerRefund]) -> list[RefundView]:
    return [
        refund_view(
            refund,
            currency=refund.order.currency,
            refunded=sum((entry.amount for entry in refund.ledger.all()), start=ZERO),
        )
        for refund in refunds
    ]
