"""Writing the order outbox: every order change that the platform must learn about.

The sync row is written in the same transaction as the order change; on commit a wake-up
rings the push drain's doorbell (``marketplace.outbox.doorbell``), which only wakes a
worker: the drain finds the row because it is due. If the wake-up is lost, the sweeper
finds the row (``next_attempt_at`` has passed) and rings again. The push itself is the
outbox engine's, with the order push kind (``push.py``).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from marketplace.db import rows_insert
from marketplace.enqueue import task_enqueue
from marketplace.orders.models import Order, OrderSync, SyncEvent
from marketplace.outbox.doorbell import Doorbell

ORDERS_PUSH_DRAIN_TASK = "marketplace.orders.tasks.orders_push_drain_task"
ORDER_PUSH_TASK = "marketplace.orders.tasks.order_push_task"
PUSH_DOORBELL = Doorbell(key="orders:push-drain-doorbell", task=ORDERS_PUSH_DRAIN_TASK)


def push_enqueue(*, order_id: int, countdown: float | None = None) -> None:
    """Wake a worker for this order once the current transaction commits."""
    # Looked up at call time (not bound here), so tests can record wake-ups instead.
    transaction.on_commit(lambda: push_wake(order_id=order_id, countdown=countdown))


def push_wake(*, order_id: int, countdown: float | None = None) -> None:
    """A due push rings the drain doorbell; a retry for later gets a message of its own."""
    if countdown:
        task_enqueue(ORDER_PUSH_TASK, order_id, countdown=countdown, after_commit=False)
    else:
        PUSH_DOORBELL.ring()


class Events:
    """Sync events of one transaction, written in one statement at its end."""

    def __init__(self) -> None:
        self.rows: list[SyncEvent] = []

    def add(
        self,
        sync: OrderSync,
        kind: str,
        message: str,
        *,
        version: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        self.rows.append(
            SyncEvent(
                order_id=sync.order_id,
                kind=kind,
                version=version,
                message=message[:2000],
                detail=detail or {},
            )
        )

    def write(self) -> None:
        rows_insert(self.rows)


def sync_event_add(
    *,
    order_id: int,
    kind: str,
    message: str = "",
    version: int | None = None,
    actor: str = "",
    detail: dict[str, Any] | None = None,
) -> SyncEvent:
    return SyncEvent.objects.create(
        order_id=order_id,
        kind=kind,
        message=message[:2000],
        version=version,
        actor=actor[:150],
        detail=detail or {},
    )


def order_sync_create(*, order: Order, actor: str) -> OrderSync:
    """The outbox row of a new order: version 1, due now."""
    sync = OrderSync.objects.create(
        order=order,
        status=OrderSync.Status.PENDING,
        desired_version=1,
        next_attempt_at=timezone.now(),
    )
    sync_event_add(
        order_id=order.id,
        kind=SyncEvent.Kind.QUEUED,
        version=1,
        actor=actor,
        message=f"order received as {order.state}",
    )
    # Open work for the seller: the sync's next tick brings a backed-off pull schedule back
    # to the interval (marketplace.sync.schedule.sync_wake_open_work).
    push_enqueue(order_id=order.id)
    return sync


def order_sync_mark_changed(*, order: Order, actor: str, message: str) -> OrderSync:
    """A new version of ``order`` must reach the platform. Call inside the change's transaction.

    A push in flight (an active claim) is left alone: when it records its result it sees
    the newer version and queues the next push, so pushes of one order never overlap.
    """
    sync = OrderSync.objects.select_for_update().get(order_id=order.id)
    sync.desired_version += 1
    sync.status = OrderSync.Status.PENDING
    sync.attempts = 0
    sync.failures = 0
    sync.next_attempt_at = timezone.now()
    sync.save(
        update_fields=[
            "desired_version",
            "status",
            "attempts",
            "failures",
            "next_attempt_at",
            "updated_at",
        ]
    )
    sync_event_add(
        order_id=order.id,
        kind=SyncEvent.Kind.QUEUED,
        version=sync.desired_version,
        actor=actor,
        message=message,
    )
    push_enqueue(order_id=order.id)
    return sync
