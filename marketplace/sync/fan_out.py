"""Beat's tick: bring sellers with new open work back to the short interval, then queue
one pull per seller that is due. Both follow what is open and due, never the population."""

from __future__ import annotations

from django.conf import settings

from marketplace.enqueue import task_enqueue
from marketplace.sync.schedule import schedule_claim_due, sync_wake_open_work

SELLER_PULL_TASK = "marketplace.sync.tasks.seller_pull_task"


def sellers_pull_fan_out(*, batch: int | None = None, max_batches: int | None = None) -> list[int]:
    """Queue one pull per *due* seller; returns their ids.

    Due sellers are claimed through ``next_pull_at``'s index in batches of ``batch`` (one
    statement each, which moves them to a lease), at most ``max_batches`` a tick: the cost
    follows the sellers due, never the sellers connected. What is left stays due, oldest
    first, for the next tick.
    """
    batch = batch or settings.PULL_FAN_OUT_BATCH
    max_batches = max_batches or settings.PULL_FAN_OUT_MAX_BATCHES
    sync_wake_open_work()
    queued: list[int] = []
    for _ in range(max_batches):
        seller_ids = schedule_claim_due(
            limit=batch, ahead_seconds=settings.PULL_FAN_OUT_EVERY_SECONDS / 2
        )
        for seller_id in seller_ids:
            task_enqueue(SELLER_PULL_TASK, seller_id)
        queued += seller_ids
        if len(seller_ids) < batch:
            break
    return queued
