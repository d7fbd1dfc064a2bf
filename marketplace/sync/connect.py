"""A seller's connection went live: their first pull is due now, and their orders that
waited for the grant go out.

How the connect flow reaches this app without importing up: ``sellers.services`` queues
``seller_connected_task`` by name (``marketplace.enqueue.task_enqueue``, on commit of the
grant). The name is the whole contract; a message lost on the way is caught by
``sync_start_sweep`` (beat): a seller connected lately whose pull is not scheduled is
scheduled then, and the orders sweeper releases waiting orders on its own.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Exists, OuterRef
from django.utils import timezone

from marketplace.orders.services.push_recovery import orders_release_for_seller
from marketplace.sync.models import SellerSync
from marketplace.sync.schedule import schedule_start
from sellers.models import PlatformConnection

# How far back the sweep looks for a connect whose message was lost (through the
# connection's ``connected_at`` index: the cost follows recent connects).
START_SWEEP_LOOKBACK = timedelta(days=1)


def seller_sync_start(*, seller_id: int) -> int:
    """Make the seller's pull due now and release their waiting orders. Returns how many
    orders were released. Safe to run twice."""
    connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
    if connection is None or not connection.is_live:
        return 0
    schedule_start(seller_id=seller_id)
    return orders_release_for_seller(seller_id=seller_id)


def sync_start_sweep(*, now: datetime | None = None) -> int:
    """Start the schedule of each seller connected lately whose pull is not scheduled (the
    connect's message was lost). Returns how many."""
    now = now or timezone.now()
    scheduled = SellerSync.objects.filter(
        seller_id=OuterRef("seller_id"), next_pull_at__isnull=False
    )
    missed = list(
        PlatformConnection.objects.filter(
            state=PlatformConnection.State.CONNECTED,
            connected_at__gte=now - START_SWEEP_LOOKBACK,
        )
        .exclude(Exists(scheduled))
        .values_list("seller_id", flat=True)
    )
    for seller_id in missed:
        schedule_start(seller_id=seller_id)
    return len(missed)
