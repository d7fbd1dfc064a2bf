"""When pushes stall: the sweeper, releases after a reconnect, and admin retries.

The broker only wakes workers; what is due is in the database. The sweeper (beat, every
30 s) rings the push drain whenever a push is overdue (the outbox engine's
``overdue_wake``), and releases the orders of sellers who are connected again. Admins
retry dead letters from the dashboard or the Django admin (``due_again``).
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from marketplace.db import rows_update
from marketplace.orders.models import OrderSync, SyncEvent
from marketplace.orders.services.outbox import push_enqueue, sync_event_add
from marketplace.orders.services.push import ORDER_PUSH
from marketplace.outbox.sweep import due_again, overdue_wake
from sellers.models import PlatformConnection

Status = OrderSync.Status


def order_sync_sweep(*, now: datetime | None = None, limit: int | None = None) -> int:
    """Ring the drain if pushes are overdue; release waiting orders of reconnected sellers.

    Returns how many overdue pushes were found (at most ``limit``) plus how many orders
    were released.
    """
    limit = limit or settings.PUSH_SWEEP_BATCH_SIZE
    found = overdue_wake(ORDER_PUSH, limit=limit, now=now)
    released = 0
    waiting_sellers = (
        OrderSync.objects.filter(
            status=Status.WAITING_FOR_CONNECTION,
            order__seller__connection__state=PlatformConnection.State.CONNECTED,
        )
        .values_list("order__seller_id", flat=True)
        .distinct()
    )
    for seller_id in list(waiting_sellers):
        released += orders_release_for_seller(seller_id=seller_id, limit=limit)
    return found + released


def orders_release_for_seller(*, seller_id: int, limit: int | None = None) -> int:
    """The seller is connected again: queue every order that waited for the connection."""
    connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
    if connection is None or not connection.is_live:
        return 0
    now = timezone.now()
    with transaction.atomic():
        syncs = list(
            OrderSync.objects.select_for_update()
            .filter(order__seller_id=seller_id, status=Status.WAITING_FOR_CONNECTION)
            .order_by("id")[: limit or settings.PUSH_SWEEP_BATCH_SIZE]
        )
        # One UPDATE and one INSERT for the whole batch, not two statements per order.
        for sync in syncs:
            sync.status = Status.PENDING
            sync.attempts = 0
            sync.failures = 0
            sync.next_attempt_at = now
            sync.last_error = ""
            sync.updated_at = now
            push_enqueue(order_id=sync.order_id)
        rows_update(
            syncs,
            ["status", "attempts", "failures", "next_attempt_at", "last_error", "updated_at"],
        )
        SyncEvent.objects.bulk_create(
            SyncEvent(
                order_id=sync.order_id,
                kind=SyncEvent.Kind.RELEASED,
                version=sync.desired_version,
                message="the seller is connected again",
            )
            for sync in syncs
        )
    return len(syncs)


def order_sync_retry(*, order_id: int, actor: str) -> OrderSync:
    """An admin asks to push this order again now (usually a failed one)."""
    with transaction.atomic():
        sync = OrderSync.objects.select_for_update().get(order_id=order_id)
        if sync.status in {Status.SYNCED} and sync.pushed_version >= sync.desired_version:
            return sync
        due_again(ORDER_PUSH, OrderSync.objects.filter(pk=sync.pk))
        sync.refresh_from_db()
        sync_event_add(
            order_id=order_id,
            kind=SyncEvent.Kind.ADMIN_RETRY,
            version=sync.desired_version,
            actor=actor,
            message=f"retry requested by {actor}",
        )
        push_enqueue(order_id=order_id)
    return sync


def seller_failed_orders_retry(*, seller_id: int, actor: str) -> int:
    """Retry every failed push of one seller; returns how many were queued."""
    order_ids = list(
        OrderSync.objects.filter(order__seller_id=seller_id, status=Status.FAILED).values_list(
            "order_id", flat=True
        )
    )
    for order_id in order_ids:
        order_sync_retry(order_id=order_id, actor=actor)
    return len(order_ids)
