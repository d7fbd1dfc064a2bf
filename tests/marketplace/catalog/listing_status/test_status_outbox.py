"""Recording listing-status changes in the outbox: database triggers on the listing and
rejected-SKU tables write one row per SKU whose status changed, in the change's own
transaction, whatever code made the change."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import transaction

from marketplace.catalog.feeds.ingest import feed_run_ingest
from marketplace.catalog.listing_status.status_outbox import status_changes_record_all
from marketplace.catalog.models import FeedRun, Listing, RejectedSku, StatusChange
from sellers.models import Seller
from tests.marketplace.catalog.feed_files import csv_bytes, product_row

pytestmark = pytest.mark.django_db

MakeRun = Callable[..., FeedRun]


def ingest(make: MakeRun, data: bytes) -> FeedRun:
    run = make(data)
    finished = feed_run_ingest(run_id=run.pk)
    assert finished is not None
    assert finished.status == FeedRun.Status.SUCCEEDED, finished.error
    return finished


def changes(seller: Seller, after: int = 0) -> list[tuple[str, str, str]]:
    return list(
        StatusChange.objects.filter(seller=seller, pk__gt=after)
        .order_by("pk")
        .values_list("sku", "status", "reason")
    )


def last_change_id() -> int:
    return StatusChange.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def test_a_feed_with_accepted_and_rejected_rows_records_a_change_for_each(
    received_run: MakeRun, seller: Seller
) -> None:
    ingest(received_run, csv_bytes([product_row(1), product_row(2), product_row(3, price="x")]))

    recorded = changes(seller)
    assert {(sku, status) for sku, status, _ in recorded} == {
        ("SKU-000001", "live"),
        ("SKU-000002", "live"),
        ("SKU-000003", "rejected"),
    }
    assert len(recorded) == 3
    rejected = StatusChange.objects.get(seller=seller, sku="SKU-000003")
    assert rejected.reason
    assert rejected.listing_id is None
    assert rejected.sent_at is None
    live = StatusChange.objects.get(seller=seller, sku="SKU-000001")
    assert live.listing_id == Listing.objects.get(seller=seller, sku="SKU-000001").pk
    assert live.status_at is not None
    assert live.created_at is not None


def test_an_unchanged_reingest_records_nothing(received_run: MakeRun, seller: Seller) -> None:
    feed = csv_bytes([product_row(1), product_row(2), product_row(3, price="x")])
    ingest(received_run, feed)
    before = last_change_id()

    ingest(received_run, feed)

    assert changes(seller, after=before) == []


def test_rejection_acceptance_and_deactivation_are_each_recorded(
    received_run: MakeRun, seller: Seller
) -> None:
    ingest(received_run, csv_bytes([product_row(1), product_row(2), product_row(3, price="x")]))
    before = last_change_id()

    # 1 now rejected (its listing stays), 2 missing from the full feed, 3 accepted
    ingest(received_run, csv_bytes([product_row(1, price="-1"), product_row(3)]))

    latest = {sku: (status, reason) for sku, status, reason in changes(seller, after=before)}
    assert latest["SKU-000001"][0] == "rejected"
    assert latest["SKU-000001"][1]
    assert latest["SKU-000002"] == ("inactive", "")
    assert latest["SKU-000003"] == ("live", "")

    # Reactivated: back in the feed, valid again
    before = last_change_id()
    ingest(received_run, csv_bytes([product_row(1), product_row(2), product_row(3)]))
    latest = {sku: status for sku, status, _ in changes(seller, after=before)}
    assert latest == {"SKU-000001": "live", "SKU-000002": "live"}


def test_a_rolled_back_change_records_nothing(seller: Seller) -> None:
    class Abandon(Exception):
        pass

    def change_then_fail() -> None:
        with transaction.atomic():
            RejectedSku.objects.create(
                seller=seller, sku="A", reason="bad", run_id=1, updated_at="2026-01-01T00:00Z"
            )
            assert changes(seller) == [("A", "rejected", "bad")]
            raise Abandon

    with pytest.raises(Abandon):
        change_then_fail()

    assert changes(seller) == []


def test_a_set_based_update_is_recorded_too(received_run: MakeRun, seller: Seller) -> None:
    ingest(received_run, csv_bytes([product_row(n) for n in range(1, 6)]))
    before = last_change_id()

    Listing.objects.filter(seller=seller).update(active=False)

    assert sorted(changes(seller, after=before)) == [
        (f"SKU-{n:06d}", "inactive", "") for n in range(1, 6)
    ]


def test_re_send_all_records_every_current_status(received_run: MakeRun, seller: Seller) -> None:
    ingest(received_run, csv_bytes([product_row(1), product_row(2, price="x")]))
    before = last_change_id()

    assert status_changes_record_all(seller_id=seller.pk) == 2

    assert sorted(changes(seller, after=before)) == [
        ("SKU-000001", "live", ""),
        ("SKU-000002", "rejected", changes(seller)[-1][2]),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_seller_with_listings_and_rejections_can_be_deleted(seller: Seller) -> None:
    Listing.objects.create(seller=seller, sku="A", price="1.00")
    RejectedSku.objects.create(
        seller=seller, sku="B", reason="bad", run_id=1, updated_at="2026-01-01T00:00Z"
    )

    seller.user.delete()

    assert not StatusChange.objects.filter(seller_id=seller.pk).exists()
