"""Hostile feed files (issue 22): a bad character rejects its row alone, a wrong-width row
is named by its SKU, the same file gives the same outcome whatever existed before, the
reading limits fail the run fast and change nothing, and a full feed that would
deactivate much of the catalog is held until staff confirm it."""

from __future__ import annotations

import gzip
import io
import tracemalloc
import zipfile
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.test import override_settings

from marketplace.catalog.feeds.ingest import feed_run_confirm, feed_run_ingest
from marketplace.catalog.models import FeedRun, Listing, RejectedSku
from sellers.models import Seller
from tests.marketplace.catalog.feed_files import HEADER, csv_bytes, gzipped, product_row, zipped

pytestmark = pytest.mark.django_db

MakeRun = Callable[..., FeedRun]


def ingest(make: MakeRun, data: bytes, **kwargs: str) -> FeedRun:
    run = make(data, **kwargs)
    finished = feed_run_ingest(run_id=run.pk)
    assert finished is not None
    return finished


def snapshot(seller: Seller) -> dict[str, tuple[object, ...]]:
    return {
        x.sku: (x.title, x.price, x.quantity, x.active, x.updated_at)
        for x in Listing.objects.filter(seller=seller)
    }


@pytest.mark.parametrize(
    ("char", "field"),
    [("\x00", "title"), ("\x1b", "title"), ("\x07", "brand"), ("\x7f", "title"),
     ("\u202e", "title"), ("\u2066", "brand"), ("\x00", "description"),
     ("\u202e", "description")],
    ids=["nul", "esc", "bel", "del", "rlo", "lri", "nul-in-description", "rlo-in-description"],
)  # fmt: skip
def test_a_refused_character_rejects_its_row_alone_with_line_and_field(
    received_run: MakeRun, seller: Seller, char: str, field: str
) -> None:
    header = (*HEADER, "description")
    bad = {**product_row(2), "description": "ok"}
    bad[field] = f"{bad[field]}{char}x"
    rows = [product_row(1), bad, product_row(3)]

    run = ingest(received_run, csv_bytes(rows, header=header))

    assert run.status == FeedRun.Status.SUCCEEDED
    assert (run.created, run.rejected) == (2, 1)
    (rejection,) = run.rejections
    assert rejection["line"] == 3
    assert rejection["sku"] == "SKU-000002"
    assert f"line 3, field {field}: character U+{ord(char):04X} is refused" in rejection["reason"]
    assert set(snapshot(seller)) == {"SKU-000001", "SKU-000003"}


def test_a_description_may_hold_lines_and_tabs(received_run: MakeRun, seller: Seller) -> None:
    rows = [{**product_row(1), "description": "one\r\ntwo\tthree"}]

    run = ingest(received_run, csv_bytes(rows, header=(*HEADER, "description")))

    assert run.rejected == 0
    assert Listing.objects.get(seller=seller).description == "one\r\ntwo\tthree"


def test_a_nul_in_a_sku_rejects_the_row_without_storing_the_sku(
    received_run: MakeRun, seller: Seller
) -> None:
    rows = [{**product_row(1), "sku": "A\x00B"}, product_row(2)]

    run = ingest(received_run, csv_bytes(rows))

    assert (run.status, run.created, run.rejected) == ("succeeded", 1, 1)
    assert run.rejections[0]["sku"] == ""
    assert "field sku" in run.rejections[0]["reason"]


def test_a_wrong_width_row_is_rejected_with_its_sku(received_run: MakeRun, seller: Seller) -> None:
    data = csv_bytes([product_row(1)]) + b'"SKU-000002","short row"\n' + b'"SKU-000003"\n'

    run = ingest(received_run, data)

    assert (run.created, run.rejected) == (1, 2)
    assert {r["sku"] for r in run.rejections} == {"SKU-000002", "SKU-000003"}
    assert "line 3: the row has 2 fields" in run.rejections[0]["reason"]
    assert set(RejectedSku.objects.filter(seller=seller).values_list("sku", flat=True)) == {
        "SKU-000002",
        "SKU-000003",
    }


@pytest.mark.parametrize("existed", [False, True], ids=["new-sku", "existing-sku"])
@pytest.mark.parametrize("order", ["bad-then-good", "good-then-bad", "good-then-good"])
def test_the_same_file_gives_the_same_outcome_whatever_existed_before(
    received_run: MakeRun, seller: Seller, existed: bool, order: str
) -> None:
    # Given SKU 7 existed before (or not), and other listings that keep the share low
    ingest(received_run, csv_bytes(product_row(n) for n in ((7, 8, 9) if existed else (8, 9))))
    bad = {**product_row(7), "price": "-1"}
    first, second = {
        "bad-then-good": (bad, product_row(7, price="3.00")),
        "good-then-bad": (product_row(7, price="3.00"), bad),
        "good-then-good": (product_row(7, price="3.00"), product_row(7, price="4.00")),
    }[order]

    run = ingest(received_run, csv_bytes([first, second, product_row(8), product_row(9)]))

    # Then the first row of SKU 7 decides, either way: a later row never takes a rejected
    # first row's place (issue 29)
    assert run.status == "succeeded"
    listing = Listing.objects.filter(seller=seller, sku="SKU-000007").first()
    rejected = RejectedSku.objects.filter(seller=seller, sku="SKU-000007").first()
    if order == "bad-then-good":
        assert run.rejected == 2
        assert rejected is not None
        assert "negative" in rejected.reason
        # The listing that existed stays as it was; none is created.
        if existed:
            assert listing is not None
            assert (listing.price, listing.active) == (Decimal("17.99"), True)
        else:
            assert listing is None
        assert "duplicate sku: already on line 2" in run.rejections[1]["reason"]
        return
    assert run.rejected == 1
    assert listing is not None
    assert (listing.price, listing.active) == (Decimal("3.00"), True)
    assert rejected is None
    reason = run.rejections[0]["reason"]
    assert ("duplicate sku" in reason) == (order == "good-then-good")


LIMIT_CASES = [
    ({"FEED_MAX_DECOMPRESSED_BYTES": 5_000}, "FEED_MAX_DECOMPRESSED_BYTES", 100, "gzip"),
    ({"FEED_MAX_ROWS": 10}, "FEED_MAX_ROWS", 11, ""),
    ({"FEED_MAX_FIELDS": 5}, "FEED_MAX_FIELDS", 1, ""),
    ({"FEED_MAX_LINE_BYTES": 100}, "FEED_MAX_LINE_BYTES", 1, ""),
]


@pytest.mark.parametrize(
    ("limits", "reason", "rows", "compression"), LIMIT_CASES, ids=[c[1] for c in LIMIT_CASES]
)
def test_each_reading_limit_fails_the_run_and_changes_nothing(
    received_run: MakeRun,
    seller: Seller,
    limits: dict[str, int],
    reason: str,
    rows: int,
    compression: str,
) -> None:
    ingest(received_run, csv_bytes(product_row(n) for n in range(1, 4)))
    before = snapshot(seller)
    data = csv_bytes(product_row(n, price="1.00") for n in range(1, rows + 1))
    data = gzipped(data) if compression else data

    with override_settings(**limits):
        run = ingest(received_run, data, compression=compression)

    assert run.status == FeedRun.Status.FAILED
    assert reason in run.error
    assert snapshot(seller) == before


def test_a_record_spanning_lines_is_capped_too(received_run: MakeRun, seller: Seller) -> None:
    long_text = "\n".join(["x" * 50] * 10)  # each line short, the record long
    data = csv_bytes(
        [{**product_row(1), "description": long_text}], header=(*HEADER, "description")
    )

    with override_settings(FEED_MAX_LINE_BYTES=200):
        run = ingest(received_run, data)

    assert run.status == "failed"
    assert "FEED_MAX_LINE_BYTES" in run.error


def test_a_row_wider_than_the_field_limit_fails_the_run(
    received_run: MakeRun, seller: Seller
) -> None:
    data = csv_bytes([product_row(1)]) + b",".join([b"x"] * 30) + b"\n"

    with override_settings(FEED_MAX_FIELDS=20):
        run = ingest(received_run, data)

    assert run.status == "failed"
    assert "line 3 has 30 fields, more than 20 (FEED_MAX_FIELDS)" in run.error
    assert not Listing.objects.filter(seller=seller).exists()


def test_one_row_and_a_flood_of_blank_lines_fails_fast(
    received_run: MakeRun, seller: Seller
) -> None:
    ingest(received_run, csv_bytes(product_row(n) for n in range(1, 6)))
    before = snapshot(seller)
    # 20 MB of newlines (a gzip of some 20 KB), far past a 1 000-row limit.
    data = gzipped(csv_bytes([product_row(1)]) + b"\n" * 20_000_000)

    with override_settings(FEED_MAX_ROWS=1_000):
        run = ingest(received_run, data, compression="gzip")

    assert run.status == "failed"
    assert "more than 1000 rows, blank lines included (FEED_MAX_ROWS)" in run.error
    assert run.rows == 0
    assert snapshot(seller) == before


def test_a_zip_with_many_entries_is_refused(received_run: MakeRun, seller: Seller) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("catalog.csv", csv_bytes([product_row(1)]))
        for n in range(50):
            archive.writestr(f"junk/{n}.txt", b"")

    run = ingest(received_run, out.getvalue(), compression="zip")

    assert run.status == "failed"
    assert "51 entries, more than 4 (FEED_ZIP_MAX_ENTRIES)" in run.error
    assert not Listing.objects.filter(seller=seller).exists()


def test_a_zip_with_few_entries_reads_its_first_file(received_run: MakeRun, seller: Seller) -> None:
    run = ingest(received_run, zipped(csv_bytes([product_row(1)])), compression="zip")

    assert (run.status, run.created) == ("succeeded", 1)


def test_a_very_wide_row_is_refused_with_bounded_memory(
    received_run: MakeRun, seller: Seller
) -> None:
    # One row of 600 fields x 40 000 characters: 24 MB on one line (the review's file had
    # 900 000 characters a field, 540 MB; the cap makes the size of the line irrelevant).
    line = b",".join([b"x" * 40_000] * 600) + b"\n"
    data = gzip.compress(b",".join(h.encode() for h in HEADER) + b"\n" + line, compresslevel=1)
    run = received_run(data, compression="gzip")

    tracemalloc.start()
    try:
        with override_settings(FEED_MAX_LINE_BYTES=1024 * 1024):
            finished = feed_run_ingest(run_id=run.pk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert finished is not None
    assert finished.status == "failed"
    assert "FEED_MAX_LINE_BYTES" in finished.error
    assert peak < len(line) / 4  # a bound set by the cap, not by the line
    assert peak < 50 * 1024 * 1024


def test_a_full_feed_that_would_deactivate_most_listings_is_held_until_confirmed(
    received_run: MakeRun, seller: Seller, staff_user: object
) -> None:
    ingest(received_run, csv_bytes(product_row(n) for n in range(1, 11)))
    before = snapshot(seller)

    held = ingest(received_run, csv_bytes([product_row(1, price="2.00"), product_row(2)]))

    assert held.status == FeedRun.Status.HELD
    assert held.error.startswith("held: would deactivate 8 of 10 active listings (80 %)")
    assert snapshot(seller) == before  # nothing applied, not even the price
    assert feed_run_ingest(run_id=held.pk) is None  # a held run is not claimed

    confirmed = feed_run_confirm(run_id=held.pk, actor=staff_user)

    assert confirmed.status == FeedRun.Status.RECEIVED
    assert confirmed.deactivation_confirmed_by == staff_user
    applied = feed_run_ingest(run_id=held.pk)
    assert applied is not None
    assert (applied.status, applied.deactivated, applied.error) == ("succeeded", 8, "")
    stored = {x.sku: x for x in Listing.objects.filter(seller=seller)}
    assert stored["SKU-000001"].price == Decimal("2.00")
    assert sum(x.active for x in stored.values()) == 2


def test_a_feed_deactivating_up_to_the_share_is_applied_and_only_held_runs_confirm(
    received_run: MakeRun, seller: Seller, staff_user: object
) -> None:
    ingest(received_run, csv_bytes(product_row(n) for n in range(1, 5)))

    run = ingest(received_run, csv_bytes([product_row(1), product_row(2)]))

    assert (run.status, run.deactivated) == ("succeeded", 2)  # 50 %: not more than the share
    assert feed_run_confirm(run_id=run.pk, actor=staff_user).status == "succeeded"


def test_a_zip_whose_end_record_understates_its_entries_is_refused(
    received_run: MakeRun, seller: Seller
) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("catalog.csv", csv_bytes([product_row(1)]))
        for n in range(200):
            archive.writestr(f"junk/{n}.txt", b"")
    data = bytearray(out.getvalue())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8 : end + 12] = (1).to_bytes(2, "little") * 2  # "one entry"

    run = ingest(received_run, bytes(data), compression="zip")

    assert run.status == "failed"
    assert "directory is" in run.error


def test_a_held_run_cannot_be_applied_once_a_newer_file_arrived(
    received_run: MakeRun, seller: Seller, staff_user: object
) -> None:
    ingest(received_run, csv_bytes(product_row(n) for n in range(1, 11)))
    held = ingest(received_run, csv_bytes([product_row(1)]))
    assert held.status == FeedRun.Status.HELD
    newer = ingest(received_run, csv_bytes(product_row(n) for n in range(1, 11)))
    assert newer.status == "succeeded"

    after = feed_run_confirm(run_id=held.pk, actor=staff_user)

    assert after.status == FeedRun.Status.HELD
    assert after.deactivation_confirmed_by is None
    assert Listing.objects.filter(seller=seller, active=True).count() == 10
