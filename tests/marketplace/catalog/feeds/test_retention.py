"""Received feed files are deleted after FEED_FILE_RETENTION_DAYS; their runs stay."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from marketplace.catalog.feeds.retention import feed_files_prune
from marketplace.catalog.models import FeedRun
from tests.support.app_fixtures import page_text, signed_in

pytestmark = pytest.mark.django_db

FILE = b"sku,title,price\nA-1,Mug,9.99\n"


def _aged(run: FeedRun, *, days: int, status: str) -> FeedRun:
    FeedRun.objects.filter(pk=run.pk).update(
        received_at=timezone.now() - timedelta(days=days), status=status
    )
    run.refresh_from_db()
    return run


def test_old_ended_runs_lose_their_files_and_keep_their_history(
    received_run: Callable[..., FeedRun], feed_folder: Path, settings: Any
) -> None:
    settings.FEED_FILE_RETENTION_DAYS = 14
    old_ok = _aged(received_run(FILE), days=15, status="succeeded")
    old_failed = _aged(received_run(FILE), days=20, status="failed")
    recent = _aged(received_run(FILE), days=13, status="succeeded")
    # Not ended yet (a lost wake-up): the sweep will still ingest it from its file.
    old_waiting = _aged(received_run(FILE), days=30, status="received")

    assert feed_files_prune(batch_size=1) == 2  # batches until nothing is left

    for run in (old_ok, old_failed, recent, old_waiting):
        run.refresh_from_db()
    assert (old_ok.file_path, old_failed.file_path) == ("", "")
    assert (old_ok.status, old_ok.file_bytes) == ("succeeded", len(FILE))
    kept = {p.relative_to(feed_folder).as_posix() for p in feed_folder.rglob("*.csv")}
    assert kept == {recent.file_path, old_waiting.file_path}
    assert feed_files_prune() == 0


def test_a_failed_run_whose_file_was_pruned_cannot_be_retried(
    received_run: Callable[..., FeedRun], staff_user: Any
) -> None:
    run = _aged(received_run(FILE), days=30, status="failed")
    feed_files_prune()
    staff = signed_in(staff_user)

    page = page_text(staff.get(f"/dashboard/catalog/runs/{run.pk}/"))
    assert 'id="file-pruned"' in page
    assert 'id="retry-run"' not in page
    answer = staff.post(f"/dashboard/catalog/runs/{run.pk}/retry/", follow=True)

    run.refresh_from_db()
    assert run.status == "failed"
    assert "was deleted 14 days after it arrived" in page_text(answer)


def test_a_file_that_failed_as_malformed_goes_after_a_day_while_a_good_one_stays(
    received_run: Callable[..., FeedRun], feed_folder: Path, settings: Any
) -> None:
    from marketplace.catalog.feeds.ingest import feed_run_ingest

    settings.FEED_FILE_RETENTION_DAYS = 14
    settings.FEED_FAILED_FILE_RETENTION_HOURS = 24
    # Given a file that is not gzip at all, ingested as gzip: failed as malformed
    bad = feed_run_ingest(run_id=received_run(b"\x00garbage" * 50, compression="gzip").pk)
    assert bad is not None
    assert (bad.status, bad.malformed) == ("failed", True)
    good = _aged(received_run(FILE), days=0, status="succeeded")
    # ... and a run that failed for another reason (its file may be retried)
    other = received_run(FILE)
    FeedRun.objects.filter(pk=other.pk).update(status="failed", error="ingestion error: boom")

    # A few hours later: nothing goes yet
    assert feed_files_prune(now=timezone.now() + timedelta(hours=23)) == 0

    # After a day: the malformed file goes, its run stays; the others keep their files
    assert feed_files_prune(now=timezone.now() + timedelta(hours=25)) == 1
    for run in (bad, good, other):
        run.refresh_from_db()
    assert bad.file_path == ""
    assert (bad.status, bad.error) == (
        "failed",
        "the file is not gzip-compressed, as the feed is configured",
    )
    kept = {p.relative_to(feed_folder).as_posix() for p in feed_folder.rglob("*.csv")}
    assert kept == {good.file_path, other.file_path}


def test_a_held_file_is_kept_while_it_can_be_applied_and_goes_once_superseded(
    received_run: Callable[..., FeedRun], settings: Any
) -> None:
    settings.FEED_FILE_RETENTION_DAYS = 14
    # Given a held run older than the retention, and no newer file applied
    held = _aged(received_run(FILE), days=30, status="held")

    assert feed_files_prune() == 0  # staff may still "Apply anyway": its file stays
    held.refresh_from_db()
    assert held.file_path != ""

    # When a newer file of the seller is applied, the held one can never be: it goes
    _aged(received_run(FILE), days=1, status="succeeded")
    assert feed_files_prune() == 1
    held.refresh_from_db()
    assert (held.status, held.file_path) == ("held", "")
