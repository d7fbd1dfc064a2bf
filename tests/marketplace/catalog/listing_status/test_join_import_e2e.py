"""End to end over real HTTP: the sandbox process delivers the seller's feed to the live
app, the app ingests it (one product rejected), and the platform's import fetches the
app's listing-status file and joins it into the seller's rows: every product then holds
its marketplace listing id and status at the platform, the rejected one its reason."""

from __future__ import annotations

from typing import Any

import pytest

from marketplace.catalog.feeds import database_link, provision
from marketplace.catalog.feeds.mapping import mapping_default
from marketplace.catalog.listing_status import join_import
from marketplace.catalog.models import FeedRun, Listing, StatusImport
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
    """Every test here runs under both readings of the silent points."""
    return str(request.param)


def finished_run(seller: Seller, after: int = 0) -> FeedRun | None:
    run = FeedRun.objects.filter(seller=seller, pk__gt=after).order_by("-pk").first()
    return run if run and run.status in ("succeeded", "failed") else None


def test_listing_ids_statuses_and_reasons_reach_the_sellers_rows_at_the_platform(
    world: CatalogWorld, seller: Seller, staff_user: Any, eager_tasks: None
) -> None:
    # Given Alice's five products and a sixth whose price is wrong, and a seventh product
    # that is listed now and wrong in the next feed
    world.sandbox.db_rows_change(world.db_id, add=[product(6, price="-3.00")])
    api_sign_in(world, staff_user)
    source = database_link.seller_database_link(
        seller=seller, account_id=world.account_id, db_id=world.db_id, actor=staff_user
    )
    source, import_error = join_import.catalog_feed_provision(
        source=source, feed=provision.FeedSettings(mapping=mapping_default())
    )
    assert import_error == ""
    status_import = StatusImport.objects.get(source=source)

    # When the feed runs at the platform and is ingested here
    world.sandbox.export_run(source.export_id)
    first = wait_for(lambda: finished_run(seller))
    assert (first.status, first.created, first.rejected) == ("succeeded", 5, 1)
    # ... the seller then breaks a listed product's price and the feed runs again
    world.sandbox.db_rows_change(world.db_id, rows=[{"id": "AL-0003", "price": "abc"}])
    world.sandbox.export_run(source.export_id)
    second = wait_for(lambda: finished_run(seller, after=first.pk))
    assert (second.status, second.rejected) == ("succeeded", 2)
    # ... and the platform's import fetches our status file and joins it
    summary = world.sandbox.control("POST", f"/imports/{status_import.import_id}/run", {})

    # Then
    assert summary["error_flag"] in (0, False), summary
    assert (summary["rows"], summary["matched"], summary["unmatched"]) == (6, 6, 0), summary
    assert summary["bad_lines"] == 0
    rows = {row["id"]: row for row in world.sandbox.db_rows(world.db_id)}
    assert set(rows) == {f"AL-{n:04d}" for n in range(1, 7)}
    listings = {x.sku: x for x in Listing.objects.filter(seller=seller)}
    for sku in ("AL-0001", "AL-0002", "AL-0004", "AL-0005"):
        assert rows[sku]["mp_listing_id"] == str(listings[sku].pk)
        assert rows[sku]["mp_status"] == "live"
        assert rows[sku]["mp_reason"] == ""
        assert rows[sku]["mp_listing_url"].endswith(
            f"/sellers/catalog/listings/{listings[sku].pk}/"
        )
        assert rows[sku]["mp_updated_at"].endswith("Z")
    # A listed product whose latest row was rejected keeps its listing id, with the reason
    assert rows["AL-0003"]["mp_listing_id"] == str(listings["AL-0003"].pk)
    assert rows["AL-0003"]["mp_status"] == "rejected"
    assert "abc" in rows["AL-0003"]["mp_reason"]
    # A product never listed: rejected, with why, and no listing id
    assert rows["AL-0006"]["mp_listing_id"] == ""
    assert rows["AL-0006"]["mp_status"] == "rejected"
    assert rows["AL-0006"]["mp_reason"] == "price -3.00 is negative"
    # The seller's own fields are untouched
    assert rows["AL-0001"]["price"] == "11.50"

    # And staff see the import's last run once the status is read
    join_import.status_import_status_sweep()
    status_import.refresh_from_db()
    assert status_import.last_log["error_flag"] == "0"
    assert status_import.last_download_time
