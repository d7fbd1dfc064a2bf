"""Celery tasks of the sync: thin wrappers over one service each, idempotent and safe to
run late or twice (the ``SellerSync`` rows say what is due; the broker only wakes)."""

from __future__ import annotations

from celery import shared_task

from marketplace.sync.fan_out import sellers_pull_fan_out
from marketplace.sync.pull import seller_after_sale_pull, seller_pull


@shared_task(acks_late=True, ignore_result=True)
def seller_pull_task(seller_id: int) -> dict[str, object]:
    pull = seller_pull(seller_id=seller_id)
    return {"seller_id": seller_id, "ran": pull.ran, "error": pull.error}


@shared_task(acks_late=True, ignore_result=True)
def seller_pull_fan_out_task() -> int:
    return len(sellers_pull_fan_out())


@shared_task(acks_late=True, ignore_result=True)
def seller_after_sale_pull_task(seller_id: int) -> dict[str, object]:
    result = seller_after_sale_pull(seller_id=seller_id)
    return {"seller_id": seller_id, "ran": result.ran, "error": result.error}
