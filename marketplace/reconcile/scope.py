"""What one pass of a seller compares: every open order, return and refund, and a bounded
sample of recently closed ones (``RECONCILE_CLOSED_DAYS``, at most
``RECONCILE_CLOSED_SAMPLE`` orders). Read from partial indexes and the seller's recent
rows: the cost follows open work, never the seller's history.

The sample rides along with open work only: a seller with nothing open is not asked
about at all (no platform call), and their closed work was compared while it was open and
for the passes after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from marketplace.orders.models import MarketplaceState, Order
from marketplace.orders.selectors import OPEN_ORDER_STATES
from marketplace.returns.models import RefundStatus, Return, ReturnStatus, SellerRefund

CLOSED_RETURN_STATES = (ReturnStatus.COMPLETED, ReturnStatus.REJECTED)


@dataclass
class Scope:
    """Order numbers to list, each listing its own set (pages of 50 numbers)."""

    orders: list[str] = field(default_factory=list)
    # Orders with a return of ours in scope (``GET /returns?mp_order_numbers=``).
    return_orders: list[str] = field(default_factory=list)
    # Every order in scope: a seller may refund any of them (``GET /refunds``).
    refund_orders: list[str] = field(default_factory=list)
    open_count: int = 0

    @property
    def empty(self) -> bool:
        return self.open_count == 0


def seller_has_open_work(*, seller_id: int) -> bool:
    """An open order, return or refund: what puts a seller on the daily schedule."""
    return (
        Order.objects.filter(seller_id=seller_id, state__in=OPEN_ORDER_STATES).exists()
        or Return.objects.filter(seller_id=seller_id)
        .exclude(status__in=CLOSED_RETURN_STATES)
        .exists()
        or SellerRefund.objects.filter(seller_id=seller_id)
        .exclude(status=RefundStatus.COMPLETE)
        .exists()
    )


def seller_scope(*, seller_id: int) -> Scope:
    """The numbers a pass of ``seller_id`` lists at the platform (empty: nothing open)."""
    open_orders = set(
        Order.objects.filter(seller_id=seller_id, state__in=OPEN_ORDER_STATES).values_list(
            "mp_order_number", flat=True
        )
    )
    open_returns = set(
        Return.objects.filter(seller_id=seller_id)
        .exclude(status__in=CLOSED_RETURN_STATES)
        .values_list("order__mp_order_number", flat=True)
    )
    open_refunds = set(
        SellerRefund.objects.filter(seller_id=seller_id)
        .exclude(status=RefundStatus.COMPLETE)
        .values_list("order__mp_order_number", flat=True)
    )
    scope = Scope(open_count=len(open_orders | open_returns | open_refunds))
    if scope.empty:
        return scope
    since = timezone.now() - timedelta(days=settings.RECONCILE_CLOSED_DAYS)
    sample = list(
        Order.objects.filter(
            seller_id=seller_id,
            state__in=[MarketplaceState.SHIPPED, MarketplaceState.CANCELLED],
            updated_at__gte=since,
        )
        .order_by("-updated_at", "-id")
        .values_list("mp_order_number", flat=True)[: settings.RECONCILE_CLOSED_SAMPLE]
    )
    orders = sorted(open_orders | open_returns | open_refunds | set(sample))
    with_returns = set(
        Return.objects.filter(seller_id=seller_id)
        .filter(Q(order__mp_order_number__in=orders))
        .values_list("order__mp_order_number", flat=True)
    )
    scope.orders = orders
    scope.refund_orders = orders
    scope.return_orders = sorted(with_returns)
    return scope
