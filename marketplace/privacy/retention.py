"""The daily retention job: buyer data of orders closed for ``BUYER_DATA_RETENTION_DAYS``
is replaced by a pseudonym; orders of erased buyers go as soon as they close.

Set-based and batched: each pass reads at most ``batch_size`` order ids (an index-backed
query, nothing else held in memory) and replaces their data with one UPDATE per table in
its own transaction, so a long backlog neither holds locks nor grows the worker.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from marketplace.privacy.buyer_data import Erased, orders_closed, orders_pseudonymize
from marketplace.privacy.models import BuyerErasure, ErasedWhy, PendingErasure

logger = logging.getLogger(__name__)


def buyer_data_retention_apply(*, now: datetime | None = None, batch_size: int = 500) -> Erased:
    """Pseudonymize every order closed and untouched for the retention period."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.BUYER_DATA_RETENTION_DAYS)
    total = Erased()
    after = 0  # keyset: each pass starts past the last, never re-reading what it skipped
    while True:
        ids = list(
            orders_closed(quiet_since=cutoff)
            .filter(id__gt=after)
            .order_by("id")
            .values_list("id", flat=True)[:batch_size]
        )
        if not ids:
            break
        after = ids[-1]
        total += orders_pseudonymize(order_ids=ids, why=ErasedWhy.RETENTION)
    if total.orders:
        logger.info(
            "buyer data retention: %d orders, %d returns pseudonymized, %d call log rows deleted",
            total.orders,
            total.returns,
            total.calls,
        )
    return total


def pending_erasures_apply(*, batch_size: int = 500) -> Erased:
    """Erase the orders of erased buyers that have closed since (whatever their age)."""
    total = Erased()
    waiting = PendingErasure.objects.filter(order_id=OuterRef("pk"))
    while True:
        ids = list(
            orders_closed()
            .filter(Exists(waiting))
            .order_by("id")
            .values_list("id", flat=True)[:batch_size]
        )
        if not ids:
            break
        with transaction.atomic():
            total += orders_pseudonymize(order_ids=ids, why=ErasedWhy.REQUEST)
            erasure_ids = set(
                PendingErasure.objects.filter(order_id__in=ids).values_list("erasure_id", flat=True)
            )
            PendingErasure.objects.filter(order_id__in=ids).delete()
            BuyerErasure.objects.filter(id__in=erasure_ids, completed_at__isnull=True).exclude(
                Exists(PendingErasure.objects.filter(erasure_id=OuterRef("pk")))
            ).update(completed_at=timezone.now())
    if total.orders:
        logger.info("pending erasures: %d orders closed and erased", total.orders)
    return total
