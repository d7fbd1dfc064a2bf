"""The set-based apply (issue 22): the merge writes only what changed and counts created /
updated / unchanged right, a re-sent identical feed writes nothing, a run that fails
part-way changes nothing, and the SQLite path (the embedded default) gives the same
outcomes as the Postgres one (COPY and xmax)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection

from marketplace.catalog.feeds import staging
from marketplace.catalog.feeds.ingest import feed_run_ingest
from marketplace.catalog.models import FeedRun, Listing, RejectedSku
from sellers.models import Seller
from tests.marketplace.catalog.feed_files import csv_bytes, gzipped, product_row

pytestmark = pytest.mark.django_db

MakeRun = Callable[..., FeedRun]
REPO_DIR = Path(__file__).resolve().parents[4]


def ingest(make: MakeRun, data: bytes, **kwargs: str) -> FeedRun:
    run = make(data, **kwargs)
    finished = feed_run_ingest(run_id=run.pk)
    assert finished is not None
    return finished


def snapshot(seller: Seller) -> dict[str, tuple[object, ...]]:
    return {
        x.sku: (x.title, x.price, x.quantity, x.active, x.last_run_id, x.updated_at)
        for x in Listing.objects.filter(seller=seller)
    }


def test_the_merge_counts_created_updated_and_unchanged(
    received_run: MakeRun, seller: Seller
) -> None:
    # Given five listings, one of them inactive
    ingest(received_run, csv_bytes(product_row(n) for n in range(1, 7)))
    Listing.objects.filter(seller=seller, sku="SKU-000005").update(active=False)

    # When a partial feed changes one price, re-sends two as they are, brings the
    # inactive one back unchanged otherwise, and adds two
    rows = [
        product_row(1, price="1.00"),
        product_row(2),
        product_row(3),
        product_row(5),
        product_row(7),
        product_row(8),
    ]
    run = received_run(gzipped(csv_bytes(rows)), compression="gzip")
    FeedRun.objects.filter(pk=run.pk).update(full_feed=False)
    finished = feed_run_ingest(run_id=run.pk)

    # Then
    assert finished is not None
    assert (finished.created, finished.updated, finished.unchanged) == (2, 2, 2)
    assert (finished.rows, finished.rejected, finished.deactivated) == (6, 0, 0)
    stored = {x.sku: x for x in Listing.objects.filter(seller=seller)}
    assert stored["SKU-000001"].price == Decimal("1.00")
    assert stored["SKU-000005"].active
    assert stored["SKU-000004"].active  # a partial feed deactivates nothing
    assert stored["SKU-000001"].last_run_id == run.pk  # the run that last changed it


def test_a_re_sent_identical_feed_writes_no_row(received_run: MakeRun, seller: Seller) -> None:
    data = gzipped(csv_bytes(product_row(n) for n in range(1, 301)))
    ingest(received_run, data, compression="gzip")
    before = snapshot(seller)

    again = ingest(received_run, data, compression="gzip")

    assert (again.status, again.created, again.updated, again.unchanged) == (
        "succeeded",
        0,
        0,
        300,
    )
    assert again.deactivated == 0
    assert snapshot(seller) == before  # not even updated_at or last_run_id moved


def test_a_run_failing_after_its_merge_changes_nothing(
    received_run: MakeRun, seller: Seller, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest(received_run, csv_bytes(product_row(n) for n in range(1, 6)))
    ingest(received_run, csv_bytes([*(product_row(n) for n in range(1, 6)), {"sku": "BAD-1"}]))
    before = snapshot(seller)
    rejected_before = set(RejectedSku.objects.values_list("sku", "run_id"))

    def crash(*args: object, **kwargs: object) -> int:
        raise RuntimeError("the worker's disk went away")

    # When the run crashes after the merge and the rejected SKUs were written
    monkeypatch.setattr(staging, "stage_deactivate_missing", crash)
    rows = [product_row(1, price="2.00"), product_row(9), {**product_row(2), "price": "x"}]
    run = ingest(received_run, csv_bytes(rows))

    # Then the run failed with the reason and nothing of it stayed
    assert run.status == "failed"
    assert "the worker's disk went away" in run.error
    assert snapshot(seller) == before
    assert set(RejectedSku.objects.values_list("sku", "run_id")) == rejected_before


def test_a_nul_in_one_row_rejects_that_row_alone_and_applies_the_others(
    received_run: MakeRun, seller: Seller
) -> None:
    rows = [product_row(n) for n in range(1, 6)]
    rows[2] = {**rows[2], "title": "Mug\x00with a NUL"}

    run = ingest(received_run, gzipped(csv_bytes(rows)), compression="gzip")

    assert (run.status, run.created, run.rejected) == ("succeeded", 4, 1)
    assert run.rejections == [
        {
            "line": 4,
            "sku": "SKU-000003",
            "reason": "line 4, field title: character U+0000 is refused "
            "(a control character or a bidi override)",
        }
    ]
    assert RejectedSku.objects.get(seller=seller).sku == "SKU-000003"
    assert set(snapshot(seller)) == {f"SKU-00000{n}" for n in (1, 2, 4, 5)}


def test_every_rejected_sku_is_kept_and_duplicates_name_the_first_line(
    received_run: MakeRun, seller: Seller
) -> None:
    rows = [{**product_row(n), "price": "-1"} for n in range(1, 501)]
    rows += [product_row(1000), product_row(1001), product_row(1000, price="9.00")]

    run = ingest(received_run, csv_bytes(rows))

    assert (run.created, run.rejected, run.rows) == (2, 501, 503)
    assert len(run.rejections) == staging.REJECTIONS_KEPT
    assert RejectedSku.objects.filter(seller=seller).count() == 500
    assert not RejectedSku.objects.filter(seller=seller, sku="SKU-001000").exists()
    # The duplicate is counted (beyond the first REJECTIONS_KEPT listed) and loses
    assert Listing.objects.get(seller=seller, sku="SKU-001000").price == Decimal("20.99")


@pytest.mark.slow
def test_the_sqlite_path_gives_the_same_outcomes(tmp_path: Path) -> None:
    """The ingest tests again, on SQLite (executemany into the stage, counts without xmax)."""
    if connection.vendor == "sqlite":
        pytest.skip("this run is on SQLite already")
    # Without the services CI requires of the suite (REQUIRE_SERVICES): this run is SQLite.
    dropped = ("DATABASE_URL", "REDIS_URL", "REQUIRE_SERVICES")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    here = Path(__file__).parent
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            str(here / "test_ingest.py"),
            str(here / "test_ingest_rows.py"),
            str(here / "test_ingest_merge.py"),
            "-k",
            "not sqlite_path",
        ],
        cwd=REPO_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert " passed" in completed.stdout
