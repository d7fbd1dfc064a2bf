"""Single-line text in feeds (issue 29): a tab, a line break or a non-breaking space in a
single-line field becomes one space, counted and shown with its line; only a harmful
character refuses its row; the first row of a SKU decides, whatever becomes of it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from marketplace.catalog.feeds.ingest import feed_run_ingest
from marketplace.catalog.feeds.parse import RowCheck
from marketplace.catalog.models import FeedRun, Listing, RejectedSku
from sellers.models import Seller
from tests.marketplace.catalog.feed_files import HEADER, csv_bytes, product_row

pytestmark = pytest.mark.django_db

MakeRun = Callable[..., FeedRun]


def ingest(make: MakeRun, data: bytes) -> FeedRun:
    run = make(data)
    finished = feed_run_ingest(run_id=run.pk)
    assert finished is not None
    return finished


def test_tabs_nbsp_and_crlf_in_titles_are_one_space_and_every_product_is_listed(
    received_run: MakeRun, seller: Seller
) -> None:
    titles = {
        1: "Mug\tlarge",
        2: "Mug\u00a0small",
        3: "Mug\r\nblue",
        4: "Mug \t\u00a0 \r\n green",
        5: "Mug\u2009thin\u3000wide",
        6: "Mug\nred",
        7: "Mug  plain double space",
    }
    rows = [{**product_row(n), "title": title} for n, title in titles.items()]
    rows[0]["brand"] = "Ac\tme"  # a second field of the same row counts on its own

    run = ingest(received_run, csv_bytes(rows))

    assert (run.status, run.created, run.rejected) == ("succeeded", 7, 0)
    listed = dict(Listing.objects.filter(seller=seller).values_list("sku", "title"))
    assert listed == {
        "SKU-000001": "Mug large",
        "SKU-000002": "Mug small",
        "SKU-000003": "Mug blue",
        "SKU-000004": "Mug green",
        "SKU-000005": "Mug thin wide",
        "SKU-000006": "Mug red",
        "SKU-000007": "Mug  plain double space",  # nothing odd: left as it is
    }
    assert Listing.objects.get(seller=seller, sku="SKU-000001").brand == "Ac me"
    # Six titles and one brand corrected, each named with the file line its row starts on
    # (the header is line 1; the quoted line breaks of rows 3, 4 and 6 take a line each).
    assert run.corrected == 7
    assert sorted((c["line"], c["field"]) for c in run.corrections) == [
        (2, "brand"),
        (2, "title"),
        (3, "title"),
        (4, "title"),
        (6, "title"),
        (8, "title"),
        (9, "title"),
    ]
    by_line = {(c["line"], c["field"]): c["found"] for c in run.corrections}
    assert by_line[(2, "title")] == "tab"
    assert by_line[(3, "title")] == "no-break space"
    assert by_line[(4, "title")] == "carriage return, line feed"
    assert by_line[(6, "title")] == "tab, no-break space, carriage return, line feed"


def test_a_nul_still_refuses_its_row_alone(received_run: MakeRun, seller: Seller) -> None:
    rows = [
        {**product_row(1), "title": "Mug\tlarge"},
        {**product_row(2), "title": "Mug\x00evil"},
        {**product_row(3), "title": "Mug\u00a0small"},
    ]

    run = ingest(received_run, csv_bytes(rows))

    assert (run.created, run.rejected, run.corrected) == (2, 1, 2)
    (rejection,) = run.rejections
    assert rejection["sku"] == "SKU-000002"
    assert rejection["reason"].startswith("line 3, field title: character U+0000 is refused")
    assert set(Listing.objects.filter(seller=seller).values_list("sku", flat=True)) == {
        "SKU-000001",
        "SKU-000003",
    }


def test_a_later_duplicate_never_takes_a_refused_first_rows_place(
    received_run: MakeRun, seller: Seller
) -> None:
    rows = [
        {**product_row(1), "title": "Mug\x00evil"},
        {**product_row(1), "title": "Mug, the clean copy"},
        product_row(2),
    ]

    run = ingest(received_run, csv_bytes(rows))

    assert (run.created, run.rejected) == (1, 2)
    assert set(Listing.objects.filter(seller=seller).values_list("sku", flat=True)) == {
        "SKU-000002"
    }
    reasons = {r["line"]: r["reason"] for r in run.rejections}
    assert "character U+0000 is refused" in reasons[2]
    assert reasons[3] == "duplicate sku: already on line 2 of this feed"
    # The first row speaks for the SKU in the status file.
    assert "U+0000" in RejectedSku.objects.get(seller=seller, sku="SKU-000001").reason


def test_the_run_page_shows_the_corrections_to_the_seller(
    received_run: MakeRun, seller: Seller, client: Client
) -> None:
    rows = [{**product_row(1), "title": "Mug\tlarge"}]
    run = ingest(received_run, csv_bytes(rows))
    client.force_login(seller.user)

    response = client.get(f"/sellers/catalog/runs/{run.pk}/")

    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="corrections"' in body
    assert "1 field corrected" in body
    assert '<td class="num">2</td><td>title</td><td>tab made one space</td>' in body


def test_the_row_check_keeps_the_raw_id_beside_the_trimmed_sku() -> None:
    check = RowCheck(list(HEADER))
    row = {**product_row(1), "sku": " A-404 "}

    values = check(2, [row[name] for name in HEADER])

    assert isinstance(values, tuple)
    assert (values[0], values[-1]) == ("A-404", " A-404 ")
    plain = check(3, [product_row(2)[name] for name in HEADER])
    assert isinstance(plain, tuple)
    assert (plain[0], plain[-1]) == ("SKU-000002", "")


def test_staff_see_the_corrections_too(
    received_run: MakeRun, seller: Seller, client: Client, admin_user: User
) -> None:
    run = ingest(received_run, csv_bytes([{**product_row(1), "title": "a\u00a0b"}]))
    client.force_login(admin_user)

    response = client.get(f"/dashboard/catalog/runs/{run.pk}/")

    assert response.status_code == 200
    assert "no-break space made one space" in response.content.decode()
