"""Celery tasks of reconciliation: thin wrappers over one service each, safe to run late
or twice (a pass only reads, records and repairs through the outboxes and the pull)."""

from __future__ import annotations

from celery import shared_task

from marketplace.reconcile.models import RunTrigger
from marketplace.reconcile.retention import reconcile_rows_prune
from marketplace.reconcile.schedule import reconcile_tick
from marketplace.reconcile.seller_pass import seller_reconcile


@shared_task(acks_late=True, ignore_result=True)
def reconcile_tick_task() -> int:
    return len(reconcile_tick())


@shared_task(acks_late=True, ignore_result=True)
def seller_reconcile_task(
    seller_id: int, trigger: str = RunTrigger.SCHEDULE, actor: str = ""
) -> dict[str, object]:
    run = seller_reconcile(seller_id=seller_id, trigger=trigger, actor=actor)
    return {"seller_id": seller_id, "findings": run.findings_count, "error": run.error}


@shared_task(acks_late=True, ignore_result=True)
def reconcile_rows_prune_task() -> dict[str, int]:
    """Daily: runs and findings past ``RECONCILE_RETENTION_DAYS`` (never an open finding)."""
    return reconcile_rows_prune()
