"""A seller's connection went live: their first pull is due now, and their orders that
waited for the grant go out.

How the connect flow reaches this app without importing up: it does not call it at all.
``sellers`` commits the grant (``state`` connected, ``connected_at`` now) and that row is
the whole signal: each beat tick (``fan_out.sellers_pull_fan_out``) starts the sync of
every seller connected since their schedule last started, read through the
``connected_at`` index (the cost follows recent connects, not the sellers). Nothing is
sent that could be lost; a connect is picked up within one beat period, when the first
pull was due anyway.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Exists, OuterRef
from django.utils import timezone

from marketplace.orders.services.push_recovery import orders_release_for_seller
from marketplace.sync.models import SellerSync
from marketplace.sync.schedule import schedule_start
from sellers.models import PlatformConnection

# How far back a tick looks for connects not started yet: far more than a beat period, so
# a beat that was down for hours still finds them.
START_LOOKBACK = timedelta(days=1)
START_BATCH = 500  # connects started per tick at most; the rest at the next ticks


def sync_start_connected(*, now: datetime | None = None, limit: int = START_BATCH) -> list[int]:
    """Start the sync of each seller whose connection went live since their schedule last
    started (or who has none): the pull due now, the waiting orders released. Returns
    their ids. Safe to run twice: a started seller is not started again."""
    now = now or timezone.now()
    started = SellerSync.objects.filter(
        seller_id=OuterRef("seller_id"), started_at__gte=OuterRef("connected_at")
    )
    seller_ids = list(
        PlatformConnection.objects.filter(
            state=PlatformConnection.State.CONNECTED, connected_at__gte=now - START_LOOKBACK
        )
        .exclude(Exists(started))
        .order_by("connected_at")
        .values_list("seller_id", flat=True)[:limit]
    )
    for seller_id in seller_ids:
        schedule_start(seller_id=seller_id)
        orders_release_for_seller(seller_id=seller_id)
    return seller_ids
