"""Celery tasks: thin wrappers that call one service each.

Every task is idempotent and safe to run late or twice; the database says what is due,
the broker only wakes workers (see services/push.py; the pulls are marketplace.sync's).
"""

from __future__ import annotations

from celery import shared_task

from marketplace.orders.services.push import order_push, orders_push_drain
from marketplace.orders.services.push_recovery import order_sync_sweep
from marketplace.platform.calllog import platform_call_prune


@shared_task(acks_late=True, ignore_result=True)
def orders_push_drain_task() -> int:
    return orders_push_drain()


@shared_task(acks_late=True, ignore_result=True)
def order_push_task(order_id: int) -> str:
    """One order's delayed retry (a countdown), or a wake-up queued by an older release."""
    return order_push(order_id=order_id)


@shared_task(acks_late=True, ignore_result=True)
def order_sync_sweep_task() -> int:
    return order_sync_sweep()


@shared_task(acks_late=True, ignore_result=True)
def platform_call_prune_task() -> int:
    return platform_call_prune()
