"""Celery tasks: thin wrappers that call one service each.

Every task is idempotent and safe to run late or twice; the database says what is due,
the broker only wakes workers (see services/push.py and services/pull.py).
"""

from __future__ import annotations

from celery import shared_task

from marketplace.orders.services.pull import seller_pull, sellers_pull_fan_out
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
def seller_pull_task(seller_id: int) -> dict[str, object]:
    result = seller_pull(seller_id=seller_id)
    return {"seller_id": seller_id, "ran": result.ran, "error": result.error}


@shared_task(acks_late=True, ignore_result=True)
def seller_pull_fan_out_task() -> int:
    return len(sellers_pull_fan_out())


@shared_task(acks_late=True, ignore_result=True)
def platform_call_prune_task() -> int:
    return platform_call_prune()
