"""When each seller is reconciled: once a day at least, spread over the day.

Each seller has a slot in the day, a hash of their id (the same every day, different
between sellers, so passes spread evenly and never bunch after a deploy). Beat's tick
every ``RECONCILE_TICK_SECONDS`` takes the sellers with open work whose slot fell since
``RECONCILE_LOOKBACK_SECONDS`` ago, and queues a pass for each that has not had one since
that slot: a missed tick (beat restarted, a deploy) is made up by the next, and a seller is
not passed twice for one slot. The candidates are the sellers with open work (partial
indexes on open orders, open returns, open refunds): the tick's cost follows open work,
never the population of sellers; a seller with nothing open has nothing to reconcile.
"""

from __future__ import annotations

import zlib
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from marketplace.enqueue import task_enqueue
from marketplace.orders.models import Order
from marketplace.orders.selectors import OPEN_ORDER_STATES
from marketplace.reconcile.models import ReconcileRun
from marketplace.reconcile.scope import CLOSED_RETURN_STATES
from marketplace.returns.models import RefundStatus, Return, SellerRefund
from sellers.models import PlatformConnection

SELLER_RECONCILE_TASK = "marketplace.reconcile.tasks.seller_reconcile_task"
DAY_SECONDS = 86400


def seller_slot(seller_id: int) -> int:
    """The seller's second of the (UTC) day for their daily pass."""
    return zlib.crc32(f"reconcile:{seller_id}".encode()) % DAY_SECONDS


def last_slot_time(seller_id: int, now: datetime) -> datetime:
    """The latest moment at or before ``now`` that is the seller's slot."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    slot = midnight + timedelta(seconds=seller_slot(seller_id))
    return slot if slot <= now else slot - timedelta(days=1)


def sellers_with_open_work() -> set[int]:
    """Sellers with an open order, return or refund (each from its own index)."""
    # order_by() first: the models' default ordering would join DISTINCT's columns.
    sellers = set(
        Order.objects.filter(state__in=OPEN_ORDER_STATES)
        .order_by()
        .values_list("seller_id", flat=True)
        .distinct()
    )
    sellers.update(
        Return.objects.exclude(status__in=CLOSED_RETURN_STATES)
        .order_by()
        .values_list("seller_id", flat=True)
        .distinct()
    )
    sellers.update(
        SellerRefund.objects.exclude(status=RefundStatus.COMPLETE)
        .order_by()
        .values_list("seller_id", flat=True)
        .distinct()
    )
    return sellers


def sellers_due(*, now: datetime | None = None) -> list[int]:
    """Sellers with open work and a live connection whose slot fell within the lookback
    and who have had no pass since it."""
    now = now or timezone.now()
    since = now - timedelta(seconds=settings.RECONCILE_LOOKBACK_SECONDS)
    window = {
        seller_id: slot
        for seller_id in sellers_with_open_work()
        if (slot := last_slot_time(seller_id, now)) > since
    }
    if not window:
        return []
    live = set(
        PlatformConnection.objects.filter(
            seller_id__in=window, state=PlatformConnection.State.CONNECTED
        ).values_list("seller_id", flat=True)
    )
    last = dict(
        ReconcileRun.objects.filter(seller_id__in=live)
        .exclude(error__startswith="skipped")
        .order_by()
        .values("seller_id")
        .annotate(at=Max("started_at"))
        .values_list("seller_id", "at")
    )
    return sorted(s for s in live if last.get(s) is None or last[s] < window[s])


def reconcile_tick(*, now: datetime | None = None) -> list[int]:
    """Queue one pass per seller due; returns their ids."""
    due = sellers_due(now=now)
    for seller_id in due:
        task_enqueue(SELLER_RECONCILE_TASK, seller_id)
    return due
