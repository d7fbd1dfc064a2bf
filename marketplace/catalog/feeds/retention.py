"""Received feed files are kept for a while after their run ended, then deleted.

A file is what a failed run is retried from, and what staff look at when a seller asks
why a product changed, so it is kept ``FEED_FILE_RETENTION_DAYS`` after it arrived. A
file whose run failed as malformed (not a CSV, broken compression, no valid row) is of
little use beyond a look by staff: it goes after ``FEED_FAILED_FILE_RETENTION_HOURS``.
A held run's file is what staff's "Apply anyway" reads: it stays while the run can still
be applied, whatever its age, and goes like an ended run's once a newer file of the
seller was applied (the held one can then never be).
The run's row stays (its counts and rejections are the history); only the file goes,
and ``file_path`` is emptied so the page and the retry say so.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from marketplace.catalog.feeds.ingest import feed_storage
from marketplace.catalog.models import FeedRun

logger = logging.getLogger(__name__)

ENDED = (FeedRun.Status.SUCCEEDED, FeedRun.Status.FAILED)


def feed_files_prune(*, now: datetime | None = None, batch_size: int = 500) -> int:
    """Delete the files of ended runs older than the retention, and of runs failed as
    malformed older than their far shorter one; returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.FEED_FILE_RETENTION_DAYS)
    malformed_cutoff = now - timedelta(hours=settings.FEED_FAILED_FILE_RETENTION_HOURS)
    superseded = Exists(
        FeedRun.objects.filter(
            seller_id=OuterRef("seller_id"), pk__gt=OuterRef("pk"), status=FeedRun.Status.SUCCEEDED
        )
    )
    return _prune(
        Q(received_at__lt=cutoff, status__in=ENDED)
        | Q(received_at__lt=cutoff, status=FeedRun.Status.HELD) & Q(superseded)
        | Q(received_at__lt=malformed_cutoff, status=FeedRun.Status.FAILED, malformed=True),
        batch_size=batch_size,
    )


def _prune(which: Q, *, batch_size: int) -> int:
    storage = feed_storage()
    pruned = 0
    while True:
        # The partial index feedrun_file_kept holds only runs that still have a file,
        # so each pass reads what is left to prune, never the whole history.
        runs = list(
            FeedRun.objects.filter(which)
            .exclude(file_path="")
            .order_by("received_at")
            .values_list("id", "file_path")[:batch_size]
        )
        if not runs:
            return pruned
        for run_id, path in runs:
            try:
                storage.delete(path)  # a file already gone is not an error
            except OSError:
                logger.exception("feed run %s: could not delete %s", run_id, path)
        FeedRun.objects.filter(id__in=[run_id for run_id, _ in runs]).update(file_path="")
        pruned += len(runs)
