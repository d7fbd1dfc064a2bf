"""Received feed files are deleted after FEED_FILE_RETENTION_DAYS; their runs stay."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from marketplace.catalog.models import FeedRun
from marketplace.catalog.retention import feed_files_prune
from tests.app_fixtures import page_text, signed_in

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
