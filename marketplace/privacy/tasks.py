"""Beat's jobs of the privacy app: thin tasks over one service each, safe to run late or
twice (the database says what is due)."""

from __future__ import annotations

from celery import shared_task

from marketplace.privacy.housekeeping import traffic_tables_prune
from marketplace.privacy.retention import buyer_data_retention_apply, pending_erasures_apply


@shared_task(acks_late=True, ignore_result=True)
def buyer_data_retention_task() -> int:
    """Daily: pseudonymize buyer data of orders closed for the retention period."""
    return buyer_data_retention_apply().orders + pending_erasures_apply().orders


@shared_task(acks_late=True, ignore_result=True)
def pending_erasures_task() -> int:
    """Often: orders of erased buyers go as soon as they close."""
    return pending_erasures_apply().orders


@shared_task(acks_late=True, ignore_result=True)
def traffic_tables_prune_task() -> dict[str, int]:
    return traffic_tables_prune()
