"""Reads of orders and their sync state (the API, the dashboard, the portal and the admin
use these)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet
from django.db.models.functions import Coalesce

from marketplace.db import count_subquery
from marketplace.orders.models import (
    MarketplaceState,
    Order,
    OrderLine,
    OrderSync,
    SyncEvent,
    ValidationProblem,
)

# Any queryset of orders (annotated ones too): what is filtered keeps its type.
_Orders = TypeVar("_Orders", bound=QuerySet[Order])


def order_detail_queryset() -> QuerySet[Order]:
    return Order.objects.select_related("seller", "seller__user", "sync").prefetch_related(
        Prefetch(
            "lines",
            queryset=OrderLine.objects.prefetch_related("shipments", "cancellations"),
        ),
        Prefetch("problems", queryset=ValidationProblem.objects.order_by("id")),
    )


def order_get(*, mp_order_number: str) -> Order | None:
    return order_detail_queryset().filter(mp_order_number=mp_order_number).first()


def order_get_by_id(*, order_id: int) -> Order | None:
    return order_detail_queryset().filter(pk=order_id).first()


def order_list(
    *, seller_id: int | None = None, sync_status: str | None = None, state: str | None = None
) -> QuerySet[Order]:
    """Orders, newest first, with their sync row (for lists; filter as needed)."""
    orders = Order.objects.select_related("seller", "sync").order_by("-created_at", "-id")
    if seller_id is not None:
        orders = orders.filter(seller_id=seller_id)
    if sync_status:
        orders = orders.filter(sync__status=sync_status)
    if state:
        orders = orders.filter(state=state)
    return orders


def order_sync_history(*, order_id: int, limit: int = 200) -> list[SyncEvent]:
    return list(SyncEvent.objects.filter(order_id=order_id).order_by("-created_at", "-id")[:limit])


def order_open_problems(*, order_id: int) -> list[ValidationProblem]:
    return list(ValidationProblem.objects.filter(order_id=order_id, resolved_at__isnull=True))


def order_sync_status_counts(*, seller_id: int | None = None) -> dict[str, int]:
    """How many orders are in each sync status (every status present, zero if none)."""
    rows = OrderSync.objects.all()
    if seller_id is not None:
        rows = rows.filter(order__seller_id=seller_id)
    counts = {status: 0 for status in OrderSync.Status.values}
    for row in rows.values("status").annotate(n=Count("id")):
        counts[row["status"]] = row["n"]
    return counts


def orders_failed_for_seller(*, seller_id: int) -> QuerySet[Order]:
    return order_list(seller_id=seller_id, sync_status=OrderSync.Status.FAILED)


def orders_with_open_problems(*, seller_id: int | None = None) -> QuerySet[Order]:
    orders = order_list(seller_id=seller_id).filter(
        Q(problems__resolved_at__isnull=True) & Q(problems__isnull=False)
    )
    return orders.distinct()


def open_problems_count() -> Coalesce:
    """Each order's open validation problems, as a correlated subquery (for ``annotate``)."""
    return count_subquery(
        ValidationProblem.objects.filter(order=OuterRef("pk"), resolved_at__isnull=True), "order"
    )


def with_open_problems(orders: _Orders) -> _Orders:
    """Only the orders with at least one open validation problem."""
    return orders.filter(
        Exists(ValidationProblem.objects.filter(order=OuterRef("pk"), resolved_at__isnull=True))
    )


@dataclass(frozen=True)
class LineFulfillment:
    line: OrderLine
    shipped: int
    cancelled: int

    @property
    def remaining(self) -> int:
        return max(self.line.quantity - self.shipped - self.cancelled, 0)

    @property
    def status(self) -> str:
        done = self.shipped + self.cancelled
        if done == 0:
            return "unfulfilled"
        return "fulfilled" if done >= self.line.quantity else "partially fulfilled"


def line_fulfillments(order: Order) -> list[LineFulfillment]:
    """Per line: shipped and cancelled quantities (from the prefetched rows)."""
    return [
        LineFulfillment(
            line=line,
            shipped=sum(s.quantity for s in line.shipments.all()),
            cancelled=sum(c.quantity for c in line.cancellations.all()),
        )
        for line in order.lines.all()
    ]


# --- the pull schedule's "open work" rule ----------------------------------------------

OPEN_ORDER_STATES = (MarketplaceState.PENDING, MarketplaceState.AWAITING_SHIPMENT)


def seller_open_orders_reason(seller_id: int) -> str:
    """ "open orders" while the seller has an unsettled order (their fulfillment may still
    change), else "". ``marketplace.sync`` asks it after each pull of the seller."""
    has_open = Order.objects.filter(seller_id=seller_id, state__in=OPEN_ORDER_STATES).exists()
    return "open orders" if has_open else ""
