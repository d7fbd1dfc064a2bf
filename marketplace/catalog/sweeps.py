"""What beat runs for the catalog. Runs whose ingestion wake-up was lost, or whose worker
died mid-way, are queued again (a run whose worker died FEED_INGEST_MAX_ATTEMPTS times
fails for good): the database, not the broker, says what is pending. And
every provisioned platform object (the feeds' exports, the listing-status imports) gets
its status refreshed, and the ones failed set-ups left behind deleted."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from marketplace.catalog import dispatch, provisioned
from marketplace.catalog.feeds import provision
from marketplace.catalog.listing_status import join_import
from marketplace.catalog.models import FeedRun

RECEIVED_GRACE = timedelta(minutes=2)
# Longer than the ingest task's hard time limit: a run still "ingesting" after this
# lost its worker.
INGESTING_LEASE = timedelta(seconds=settings.FEED_INGEST_TIME_LIMIT + 200)


def feed_run_sweep() -> int:
    now = timezone.now()
    lost = FeedRun.objects.filter(
        status=FeedRun.Status.INGESTING, started_at__lt=now - INGESTING_LEASE
    )
    # Each start counts an attempt (ingest.feed_run_claim): a file whose worker died that
    # many times is a poison file (it kills or hangs its worker); staff may retry it.
    max_attempts = settings.FEED_INGEST_MAX_ATTEMPTS
    lost.filter(attempts__gte=max_attempts).update(
        status=FeedRun.Status.FAILED,
        finished_at=now,
        error=f"the worker stopped while ingesting this file {max_attempts} times",
    )
    lost.filter(attempts__lt=max_attempts).update(status=FeedRun.Status.RECEIVED)
    due = list(
        FeedRun.objects.filter(
            status=FeedRun.Status.RECEIVED, received_at__lt=now - RECEIVED_GRACE
        ).values_list("id", flat=True)[:100]
    )
    for run_id in due:
        dispatch.feed_run_ingest_enqueue(run_id)
    return len(due)


def provisioned_status_sweep() -> int:
    """Read every feed's and every import's status at the platform (waits for sign-in)."""
    return provision.feed_status_sweep() + join_import.status_import_status_sweep()


def provisioned_cleanup_sweep() -> int:
    """Delete the exports and imports that failed set-ups (or import removals) could not
    delete at the platform; waits while the API access needs sign-in."""
    return provisioned.cleanup_sweep(provision.EXPORT, join_import.IMPORT)
