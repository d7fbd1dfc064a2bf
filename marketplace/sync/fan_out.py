"""Beat's tick: start the sync of sellers who just connected, bring sellers with new open
work back to the short interval, then queue one pull per seller that is due. Each follows
what is new, open or due, never the population. Also the operators' one-off catch-up of
every seller's after-sale pull."""

from __future__ import annotations

from django.conf import settings

from marketplace.enqueue import task_enqueue
from marketplace.returns.selectors import sellers_with_open_returns_or_refunds
from marketplace.sync.connect import sync_start_connected
from marketplace.sync.schedule import schedule_claim_due, sync_wake_open_work
from sellers.models import PlatformConnection

SELLER_PULL_TASK = "marketplace.sync.tasks.seller_pull_task"
SELLER_AFTER_SALE_PULL_TASK = "marketplace.sync.tasks.seller_after_sale_pull_task"


def sellers_pull_fan_out(*, batch: int | None = None, max_batches: int | None = None) -> list[int]:
    """Queue one pull per *due* seller; returns their ids.

    Due sellers are claimed through ``next_pull_at``'s index in batches of ``batch`` (one
    statement each, which moves them to a lease), at most ``max_batches`` a tick: the cost
    follows the sellers due, never the sellers connected. What is left stays due, oldest
    first, for the next tick.
    """
    batch = batch or settings.PULL_FAN_OUT_BATCH
    max_batches = max_batches or settings.PULL_FAN_OUT_MAX_BATCHES
    sync_start_connected()
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


def sellers_after_sale_pull_fan_out() -> list[int]:
    """Queue an after-sale pull for each connected seller with something open, at once.

    Not on beat (each seller's scheduled pull runs the after-sale pull): a one-off
    catch-up for operators, the soak and tests."""
    seller_ids = list(
        sellers_with_open_returns_or_refunds()
        .filter(connection__state=PlatformConnection.State.CONNECTED)
        .values_list("pk", flat=True)
    )
    for seller_id in seller_ids:
        task_enqueue(SELLER_AFTER_SALE_PULL_TASK, seller_id)
    return seller_ids
