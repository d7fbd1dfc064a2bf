"""End to end over real HTTP (sandbox process, live app, a real Celery worker), issue 29:
EDRTS names each product by the seller's own id exactly as their database holds it (ids
with leading or trailing spaces create no product at the platform), sends nothing before
the listing-status import's first run created the mp_* fields, and after every feed run
every product's mp_* values at the platform equal the status file's, time included:
through content-only edits and SKUs rejected run after run."""

from __future__ import annotations

import time
from typing import Any

import pytest

from marketplace.catalog.feeds import database_link, provision
from marketplace.catalog.feeds.mapping import mapping_default
from marketplace.catalog.listing_status import join_import
from marketplace.catalog.listing_status.status_file import DEFAULT_TARGETS, status_rows
from marketplace.catalog.models import FeedRun, Listing, StatusChange, StatusImport
from sellers.models import Seller
from tests.marketplace.catalog.platform import CatalogWorld, api_sign_in, product, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_violations")]

FIELDS = tuple(DEFAULT_TARGETS.values())  # mp_listing_id, mp_status, … mp_updated_at


def finished_run(seller: Seller, after: int = 0) -> FeedRun | None:
    run = FeedRun.objects.filter(seller=seller, pk__gt=after).order_by("-pk").first()
    return run if run and run.status in ("succeeded", "failed") else None


def at_platform(world: CatalogWorld) -> dict[str, dict[str, str]]:
    return {row["id"]: row for row in world.sandbox.db_rows(world.db_id, per_page=1000)}


def drained(world: CatalogWorld, seller: Seller) -> bool:
    waiting = StatusChange.objects.filter(seller=seller, sent_at__isnull=True).exists()
    return not waiting and bool(world.sandbox.edrts_wait_idle())


def mismatches(world: CatalogWorld, seller: Seller) -> list[str]:
    """Products whose mp_* values at the platform differ from the status file's row."""
    rows = at_platform(world)
    wrong = []
    for record_id, *values in status_rows(seller_id=seller.pk):
        expected = dict(zip(FIELDS, values, strict=True))
        got = {field: rows.get(record_id, {}).get(field) for field in FIELDS}
        if got != expected:
            wrong.append(f"{record_id!r}: {got} != {expected}")
    return wrong


def feed_run(world: CatalogWorld, seller: Seller, source: Any, after: int = 0) -> FeedRun:
    world.sandbox.export_run(source.export_id)
    run = wait_for(lambda: finished_run(seller, after=after), timeout=30)
    assert run.status == "succeeded", run.error
    return run


def test_edrts_names_the_sellers_own_ids_and_keeps_the_status_files_values_and_times(
    world: CatalogWorld, seller: Seller, staff_user: Any, celery_worker_thread: Any
) -> None:
    # Given Alice's five products and two whose ids carry spaces in her database
    world.sandbox.db_rows_change(
        world.db_id, add=[product(404, id="AL-0404 "), product(405, id=" AL-0405")]
    )
    api_sign_in(world, staff_user)
    source = database_link.seller_database_link(
        seller=seller, account_id=world.account_id, db_id=world.db_id, actor=staff_user
    )
    source, import_error = join_import.catalog_feed_provision(
        source=source, feed=provision.FeedSettings(mapping=mapping_default())
    )
    assert import_error == ""
    status_import = StatusImport.objects.get(source=source)

    # When the feed runs and is ingested
    first = feed_run(world, seller, source)
    assert (first.created, first.rejected) == (7, 0)
    assert Listing.objects.get(seller=seller, sku="AL-0404").record_id == "AL-0404 "

    # Then nothing goes out by EDRTS before the import's first run (no mp_* field yet)
    time.sleep(1.0)
    assert world.sandbox.edrts_state()["stats"]["requests"]["requests"] == 0
    assert StatusChange.objects.filter(seller=seller, sent_at__isnull=True).count() == 7

    # When the import runs once and the app reads its status (the periodic sweep)
    summary = world.sandbox.control("POST", f"/imports/{status_import.import_id}/run", {})
    assert summary["error_flag"] in (0, False), summary
    join_import.status_import_status_sweep()

    # Then the sender wakes and sends; the import goes daily; every product holds the
    # status file's values, under its own id: no product was created
    wait_for(lambda: drained(world, seller), timeout=30)
    assert world.sandbox.edrts_state()["stats"]["requests"]["records_received"] >= 7
    assert StatusImport.objects.get(pk=status_import.pk).cron.split()[1] != "*"
    rows = at_platform(world)
    assert set(rows) == {*(f"AL-{n:04d}" for n in range(1, 6)), "AL-0404 ", " AL-0405"}
    assert mismatches(world, seller) == []

    # When the seller edits titles only (no status change), breaks two prices, and the
    # feed runs again, a second apart (the file's times have whole seconds)
    time.sleep(1.1)
    world.sandbox.db_rows_change(
        world.db_id,
        rows=[
            {"id": "AL-0001", "title": "Stoneware Mug 1, new title"},
            {"id": "AL-0404 ", "title": "Mug 404, new title"},
            {"id": "AL-0002", "price": "abc"},
            {"id": " AL-0405", "price": "abc"},
        ],
    )
    second = feed_run(world, seller, source, after=first.pk)
    assert (second.updated, second.rejected) == (2, 2)

    # Then EDRTS brings the platform to the file again, time included
    wait_for(lambda: drained(world, seller), timeout=30)
    assert mismatches(world, seller) == []
    after_second = at_platform(world)
    assert after_second[" AL-0405"]["mp_status"] == "rejected"
    assert after_second["AL-0001"]["mp_updated_at"] == rows["AL-0001"]["mp_updated_at"]

    # When the same feed runs once more (the two SKUs rejected again, for the same reason)
    time.sleep(1.1)
    third = feed_run(world, seller, source, after=second.pk)
    assert (third.updated, third.rejected) == (0, 2)
    wait_for(lambda: drained(world, seller), timeout=30)

    # Then nothing moved: the file and the platform agree, with the same times as before
    assert mismatches(world, seller) == []
    after_third = at_platform(world)
    for record_id in ("AL-0002", " AL-0405", "AL-0001", "AL-0404 "):
        assert after_third[record_id]["mp_updated_at"] == after_second[record_id]["mp_updated_at"]
    assert len(after_third) == 7
