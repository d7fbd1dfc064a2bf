from celery import shared_task

from marketplace.dashboard.activity import activity_snapshot_refresh


@shared_task(ignore_result=True)
def activity_snapshot_task() -> None:
    """Beat: refresh the overview's aggregates (see marketplace.dashboard.activity)."""
    activity_snapshot_refresh()
