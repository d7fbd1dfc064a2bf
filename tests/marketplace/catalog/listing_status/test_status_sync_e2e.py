"""End to end over real HTTP with the sandbox process and a real Celery worker: the
platform delivers the seller's feed, the app ingests it (accepted and rejected rows),
and within seconds of the listing-status import's first run (which creates the mp_*
fields EDRTS writes), and without any later run, every product's ``mp_status`` and
``mp_reason`` at the platform match the marketplace's; a 429 in the
middle delays the statuses but loses none; the sandbox counts no violation. Under both
readings: the EDRTS answer in either of its two shapes."""

from __future__ import annotations

import time
from typing import Any

import pytest

from marketplace.catalog.feeds import database_link, provision
from marketplace.catalog.feeds.mapping import mapping_default
from marketplace.catalog.listing_status import join_import
from marketplace.catalog.listing_status.status_file import status_rows
from marketplace.catalog.models import FeedRun, Listing, RejectedSku, StatusImport
from sellers.models import Seller
from tests.marketplace.catalog.platform import (
    READINGS,
    CatalogWorld,
    api_sign_in,
    product,
    wait_for,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_violations")]


@pytest.fixture(params=READINGS)
def reading(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def finished_run(seller: Seller, after: int = 0) -> FeedRun | None:
    run = FeedRun.objects.filter(seller=seller, pk__gt=after).order_by("-pk").first()
    return run if run and run.status in ("succeeded", "failed") else None


def mismatches(world: CatalogWorld, seller: Seller) -> list[str]:
    """SKUs whose mp_status / mp_reason at the platform differ from the status file's."""
    at_platform = {}
    for page in range(1, 5):
        for row in world.sandbox.db_rows(world.db_id, page=page, per_page=1000):
            at_platform[row["id"]] = row
    wrong = []
    for sku, listing_id, status, reason, _, _ in status_rows(seller_id=seller.pk):
        row = at_platform.get(sku, {})
        got = (row.get("mp_listing_id"), row.get("mp_status"), row.get("mp_reason"))
        if got != (listing_id, status, reason):
            wrong.append(f"{sku}: {got} != {(listing_id, status, reason)}")
    return wrong


def test_statuses_reach_the_sellers_products_within_seconds_without_another_import_run(
    world: CatalogWorld,
    seller: Seller,
    staff_user: Any,
    celery_worker_thread: Any,
    reading: str,
) -> None:
    # Given Alice's database of 300 products, one with a wrong price, her feed and its
    # import set up, and the import's first run (it creates the mp_* fields; its daily
    # schedule then never comes in this test)
    world.sandbox.db_rows_change(
        world.db_id, add=[product(n) for n in range(6, 300)] + [product(300, price="-3.00")]
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
    world.sandbox.control("POST", f"/imports/{status_import.import_id}/run", {})
    join_import.status_import_status_sweep()
    status_import.refresh_from_db()
    assert status_import.cron.split()[1] != "*"  # daily: EDRTS brings statuses back
    first_download = status_import.last_download_time
    assert first_download

    # When the feed runs at the platform and is ingested here
    started = time.monotonic()
    world.sandbox.export_run(source.export_id)
    first = wait_for(lambda: finished_run(seller), timeout=30)
    assert (first.status, first.created, first.rejected) == ("succeeded", 299, 1)

    # Then within seconds every product holds its status and reason at the platform
    wait_for(lambda: not mismatches(world, seller) and world.sandbox.edrts_wait_idle(), timeout=15)
    assert time.monotonic() - started < 20
    rows = {row["id"]: row for row in world.sandbox.db_rows(world.db_id, per_page=1000)}
    assert rows["AL-0300"]["mp_status"] == "rejected"
    assert rows["AL-0300"]["mp_reason"] == RejectedSku.objects.get(seller=seller).reason
    assert rows["AL-0001"]["mp_listing_id"] == str(
        Listing.objects.get(seller=seller, sku="AL-0001").pk
    )

    # When the platform allows one EDRTS request in 3 seconds and the seller changes
    # 200 products (2 requests): the second meets a 429 mid-way
    world.sandbox.set_rate_limit("edrts", 1, window_seconds=3)
    limited_before = world.sandbox.edrts_state()["stats"]["requests"]["rate_limited"]
    world.sandbox.db_rows_change(
        world.db_id,
        rows=[{"id": f"AL-{n:04d}", "price": "abc"} for n in range(1, 201)]
        + [{"id": "AL-0300", "price": "4.00"}],
    )
    world.sandbox.export_run(source.export_id)
    second = wait_for(lambda: finished_run(seller, after=first.pk), timeout=30)
    assert (second.status, second.rejected) == ("succeeded", 200)

    # Then the statuses arrive after the wait, none lost, no request inside the wait
    wait_for(lambda: not mismatches(world, seller), timeout=20)
    assert world.sandbox.edrts_state()["stats"]["requests"]["rate_limited"] > limited_before
    rows = {row["id"]: row for row in world.sandbox.db_rows(world.db_id, per_page=1000)}
    assert rows["AL-0001"]["mp_status"] == "rejected"
    assert rows["AL-0300"]["mp_status"] == "live"
    # ... and the import did not run again
    held = world.sandbox.control("GET", f"/imports/{status_import.import_id}")["import"]
    assert held.get("last_download_time") == first_download
    world.sandbox.set_rate_limit("edrts", 300, window_seconds=60)


def test_turning_edrts_off_brings_the_hourly_import_back_and_on_the_daily_one(
    world: CatalogWorld, seller: Seller, staff_user: Any, eager_tasks: None, reading: str
) -> None:
    from marketplace.catalog.listing_status import edrts_sender

    api_sign_in(world, staff_user)
    source = database_link.seller_database_link(
        seller=seller, account_id=world.account_id, db_id=world.db_id, actor=staff_user
    )
    source, import_error = join_import.catalog_feed_provision(
        source=source, feed=provision.FeedSettings(mapping=mapping_default())
    )
    assert import_error == ""
    # Hourly until its first run (EDRTS waits for it: it creates the fields), then daily
    first = StatusImport.objects.get(source=source)
    assert first.cron == ("15 * * * *" if reading == "A" else "15 2 * * *")
    world.sandbox.control("POST", f"/imports/{first.import_id}/run", {})
    join_import.status_import_status_refresh(source=source)
    assert StatusImport.objects.get(source=source).cron == "15 2 * * *"  # EDRTS on: daily

    assert edrts_sender.status_sync_enable(seller_id=seller.pk, enabled=False) == ""
    off = StatusImport.objects.get(source=source)
    # Hourly again; a platform that refuses hour "*" (reading B) keeps it daily, and says so
    assert off.cron == ("15 * * * *" if reading == "A" else "15 2 * * *")

    assert edrts_sender.status_sync_enable(seller_id=seller.pk, enabled=True) == ""
    on = StatusImport.objects.get(source=source)
    assert (on.cron, on.schedule_note) == ("15 2 * * *", "")
