"""One status time for the status file and EDRTS (issue 29): the time moves only when
what is sent changes, so the outbox rows the triggers record carry the file's time, and a
content-only edit or a SKU rejected again for the same reason moves nothing."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from marketplace.catalog.feeds.ingest import feed_run_ingest
from marketplace.catalog.listing_status.status_file import status_rows
from marketplace.catalog.models import FeedRun, StatusChange
from sellers.models import Seller
from tests.marketplace.catalog.feed_files import csv_bytes, product_row

pytestmark = pytest.mark.django_db

MakeRun = Callable[..., FeedRun]


def ingest(make: MakeRun, rows: list[dict]) -> FeedRun:
    finished = feed_run_ingest(run_id=make(csv_bytes(rows)).pk)
    assert finished is not None
    assert finished.status == "succeeded", finished.error
    return finished


def file_times(seller: Seller) -> dict[str, tuple[str, str]]:
    return {row[0]: (row[2], row[5]) for row in status_rows(seller_id=seller.pk)}


def latest_outbox(seller: Seller) -> dict[str, tuple[str, str]]:
    latest: dict[str, tuple[str, str]] = {}
    for change in StatusChange.objects.filter(seller=seller).order_by("id"):
        stamp = change.status_at.strftime("%Y-%m-%dT%H:%M:%SZ") if change.status_at else ""
        latest[change.record_id or change.sku] = (change.status, stamp)
    return latest


def test_the_outbox_carries_the_status_files_time_through_edits_and_repeated_rejections(
    received_run: MakeRun, seller: Seller
) -> None:
    good = [product_row(n) for n in range(1, 5)]
    ingest(received_run, [*good[:3], {**good[3], "price": "abc"}])
    before = file_times(seller)
    assert latest_outbox(seller) == before

    # A second later: titles edited (no status change) and SKU 4 rejected again, same reason
    time.sleep(1.1)
    edited = [{**row, "title": f"{row['title']} (new)"} for row in good[:3]]
    second = ingest(received_run, [*edited, {**good[3], "price": "abc"}])
    assert (second.updated, second.rejected) == (3, 1)
    assert file_times(seller) == before  # nothing the seller is told changed
    assert latest_outbox(seller) == before

    # A second later: SKU 2 rejected, SKU 4 accepted (its rejection lifted): both move
    time.sleep(1.1)
    third = ingest(received_run, [edited[0], {**edited[1], "price": "-1"}, edited[2], good[3]])
    assert third.rejected == 1
    after = file_times(seller)
    assert after["SKU-000002"][0] == "rejected"
    assert after["SKU-000004"][0] == "live"
    assert after["SKU-000002"][1] > before["SKU-000002"][1]
    assert after["SKU-000004"][1] > before["SKU-000004"][1]
    assert after["SKU-000001"] == before["SKU-000001"]
    assert latest_outbox(seller) == after
