"""Ingesting feed files into listings: validation per row, upserts, deactivation, and
files malformed as a whole (they change nothing)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from marketplace.catalog.feeds.ingest import feed_run_ingest, feed_run_retry
from marketplace.catalog.models import FeedRun, Listing
from sellers.models import Seller
from tests.marketplace.catalog.feed_files import HEADER, csv_bytes, gzipped, product_row, zipped

pytestmark = pytest.mark.django_db

MakeRun = Callable[..., FeedRun]


def ingest(make: MakeRun, data: bytes, **kwargs: str) -> FeedRun:
    run = make(data, **kwargs)
    finished = feed_run_ingest(run_id=run.pk)
    assert finished is not None
    return finished


def listings(seller: Seller) -> dict[str, Listing]:
    return {listing.sku: listing for listing in Listing.objects.filter(seller=seller)}


def test_a_gzip_feed_creates_listings_and_records_the_run(
    received_run: MakeRun, seller: Seller
) -> None:
    run = ingest(
        received_run, gzipped(csv_bytes(product_row(n) for n in range(1, 2501))), compression="gzip"
    )

    assert run.status == FeedRun.Status.SUCCEEDED
    assert (run.rows, run.created, run.updated, run.rejected) == (2500, 2500, 0, 0)
    assert run.duration_ms is not None
    assert run.finished_at is not None
    stored = listings(seller)
    assert len(stored) == 2500
    first = stored["SKU-000001"]
    assert first.price == Decimal("11.99")
    assert first.quantity == 1
    assert first.active
    assert first.title == 'Product 1, "quoted" and, comma'
    assert first.link == "https://shop.example.com/p/1"


def test_plain_and_zip_feeds_with_other_delimiters_are_read(
    received_run: MakeRun, seller: Seller
) -> None:
    plain = ingest(received_run, csv_bytes([product_row(1)], delimiter="\t"), delimiter="tab")
    zip_run = ingest(
        received_run,
        zipped(csv_bytes([product_row(1), product_row(2)], delimiter=";")),
        compression="zip",
        delimiter="semicolon",
    )

    assert (plain.status, plain.created) == ("succeeded", 1)
    assert (zip_run.status, zip_run.created, zip_run.unchanged) == ("succeeded", 1, 1)


def test_a_second_feed_updates_changed_rows_and_deactivates_missing_ones(
    received_run: MakeRun, seller: Seller
) -> None:
    ingest(received_run, csv_bytes(product_row(n) for n in range(1, 6)))
    rows = [
        product_row(1, price="5.00", quantity="0"),
        product_row(2),
        product_row(3),
        product_row(9),
    ]

    run = ingest(received_run, csv_bytes(rows))

    assert (run.created, run.updated, run.unchanged, run.deactivated) == (1, 1, 2, 2)
    stored = listings(seller)
    assert stored["SKU-000001"].price == Decimal("5.00")
    assert stored["SKU-000001"].quantity == 0
    assert not stored["SKU-000004"].active
    assert not stored["SKU-000005"].active
    assert stored["SKU-000009"].active
    # And a listing that comes back is active again
    again = ingest(received_run, csv_bytes(product_row(n) for n in (1, 2, 3, 4, 9)))
    assert again.updated == 2
    assert listings(seller)["SKU-000004"].active


def test_bad_rows_are_rejected_with_line_and_reason_while_the_others_apply(
    received_run: MakeRun, seller: Seller
) -> None:
    ingest(received_run, csv_bytes([product_row(3)]))
    rows = [
        product_row(1),
        {**product_row(2), "sku": ""},
        {**product_row(3), "price": "-4.00"},
        {**product_row(4), "quantity": "many"},
        {**product_row(5), "gtin": "4006381333932"},
        {**product_row(6), "link": "javascript:alert(1)"},
        {**product_row(7), "price": "12.345"},
        product_row(1),
        product_row(8),
    ]

    run = ingest(received_run, csv_bytes(rows))

    assert run.status == "succeeded"
    assert (run.rows, run.created, run.rejected) == (9, 2, 7)
    reasons = {item["line"]: item["reason"] for item in run.rejections}
    assert reasons[3] == "sku is missing"
    assert reasons[4] == "price -4.00 is negative"
    assert "quantity 'many' is not a whole number" in reasons[5]
    assert "gtin" in reasons[6]
    assert "link" in reasons[7]
    assert "at most 2 decimals" in reasons[8]
    assert "duplicate sku" in reasons[9]
    stored = listings(seller)
    assert set(stored) == {"SKU-000001", "SKU-000003", "SKU-000008"}
    # The rejected row left its listing as it was: not updated, not deactivated.
    assert stored["SKU-000003"].price == Decimal("13.99")
    assert stored["SKU-000003"].active


@pytest.mark.parametrize(
    ("data", "compression", "reason"),
    [
        (gzipped(csv_bytes(product_row(n) for n in range(500)))[:-40], "gzip", "truncated"),
        (csv_bytes([product_row(1)]), "gzip", "not gzip-compressed"),
        (b"\x1f\x8b" + b"garbage" * 50, "gzip", "truncated or corrupt"),
        (b"<html><body>Not found</body></html>\n", "", "lacks required column"),
        (bytes(range(256)) * 4, "", "not UTF-8"),
        (b"", "", "empty"),
        (csv_bytes([product_row(1)], header=[h for h in HEADER if h != "price"]), "", "price"),
        (b'sku,price,quantity\n"A1,1.00,2\n', "", "not valid CSV"),
        (b"PK\x03\x04 not really a zip", "zip", "not a zip archive"),
        (csv_bytes([{**product_row(1), "price": "-1"}]), "", "no valid row"),
    ],
    ids=[
        "truncated-gzip",
        "plain-as-gzip",
        "corrupt-gzip",
        "html",
        "binary",
        "empty",
        "missing-column",
        "unclosed-quote",
        "bad-zip",
        "every-row-bad",
    ],
)
def test_a_file_malformed_as_a_whole_changes_nothing_and_fails_the_run(
    received_run: MakeRun, seller: Seller, data: bytes, compression: str, reason: str
) -> None:
    ingest(received_run, csv_bytes(product_row(n) for n in range(1, 4)))
    before = {sku: (x.price, x.quantity, x.active) for sku, x in listings(seller).items()}

    run = ingest(received_run, data, compression=compression)

    assert run.status == FeedRun.Status.FAILED
    assert reason in run.error
    assert {sku: (x.price, x.quantity, x.active) for sku, x in listings(seller).items()} == before


def test_a_failed_run_can_be_retried_and_only_a_received_run_is_claimed(
    received_run: MakeRun, seller: Seller, staff_user: object
) -> None:
    run = ingest(received_run, b"not,a,feed\n")
    assert run.status == "failed"
    assert feed_run_ingest(run_id=run.pk) is None  # a failed run is not claimed again

    retried = feed_run_retry(run_id=run.pk, actor=staff_user)

    assert retried.status == "received"
    assert retried.retried_by == staff_user
    again = feed_run_ingest(run_id=run.pk)
    assert again is not None
    assert again.status == "failed"
    assert again.attempts == 1  # a staff retry starts the count of attempts again
