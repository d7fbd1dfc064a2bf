"""The listing-status file the platform's import fetches: HTTP Basic per seller, the exact
header, a row per SKU (live, inactive, rejected with its reason), CSV that round-trips
awkward SKUs, a constant number of queries whatever the catalog's size; and the ingest
keeping every rejected SKU (not only the first few) until it is accepted again."""

from __future__ import annotations

import base64
import csv
import io
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from marketplace.catalog.feeds.ingest import REJECTIONS_KEPT, feed_run_ingest
from marketplace.catalog.listing_status.status_file import status_password_hash
from marketplace.catalog.models import CatalogSource, FeedRun, Listing, RejectedSku, StatusImport
from sellers.models import Seller
from tests.marketplace.catalog.feed_files import csv_bytes, product_row
from tests.support.factories import CatalogSourceFactory, ListingFactory, SellerFactory

pytestmark = pytest.mark.django_db

PASSWORD = "status-file-password-0123456789abcdef"
EXACT_HEADER = (
    "SKU,Marketplace listing id,Statut de l'annonce,Raison du refus,Lien de l'annonce,"
    "Dernière mise à jour"
)


@pytest.fixture
def status_import(seller: Seller) -> StatusImport:
    source = CatalogSourceFactory(
        seller=seller,
        account_id="1",
        db_id="7",
        feed_state=CatalogSource.FeedState.ACTIVE,
        export_id="3",
        export_fields=[["sku", "id"], ["price", "price"], ["quantity", "quantity"]],
    )
    return StatusImport.objects.create(
        source=source,
        state=StatusImport.State.ACTIVE,
        import_id="11",
        status_key="the-status-key-012345678",
        username=f"status-{seller.pk}",
        password_hash=status_password_hash(PASSWORD),
        join_key="id",
    )


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def fetch(client: Client, status_import: StatusImport, auth: str | None = None) -> Any:
    headers = {"Authorization": auth} if auth else {}
    return client.get(
        f"/catalog/status/{status_import.status_key}/listing-status.csv", headers=headers
    )


def body_of(response: Any) -> str:
    return b"".join(response.streaming_content).decode("utf-8")


def rows_of(response: Any) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(body_of(response), newline="")))


def right(status_import: StatusImport) -> str:
    return basic(status_import.username, PASSWORD)


def listing(seller: Seller, sku: str, *, active: bool = True) -> Listing:
    return ListingFactory(seller=seller, sku=sku, title="", quantity=0, active=active)


def test_no_or_wrong_credentials_get_401_with_a_challenge(
    client: Client, status_import: StatusImport
) -> None:
    for auth in (None, basic(status_import.username, "wrong"), basic("someone", PASSWORD)):
        response = fetch(client, status_import, auth)

        assert response.status_code == 401
        assert response["WWW-Authenticate"].startswith("Basic ")


def test_the_right_credentials_get_the_file_and_an_unknown_key_404(
    client: Client, status_import: StatusImport
) -> None:
    response = fetch(client, status_import, right(status_import))

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert body_of(response).split("\r\n")[0] == EXACT_HEADER
    unknown = client.get(
        "/catalog/status/not-a-key/listing-status.csv",
        headers={"Authorization": right(status_import)},
    )
    assert unknown.status_code == 404


def test_a_removed_import_no_longer_opens_the_file(
    client: Client, status_import: StatusImport
) -> None:
    StatusImport.objects.filter(pk=status_import.pk).update(status_key=None, password_hash="")

    response = fetch(client, status_import, right(status_import))

    assert response.status_code == 404


def test_every_sku_has_a_row_live_inactive_or_rejected_with_its_reason(
    client: Client, status_import: StatusImport, seller: Seller, settings: Any
) -> None:
    settings.LISTING_URL_TEMPLATE = "https://market.example.com/l/{listing_id}"
    live = listing(seller, "AL-1")
    gone = listing(seller, "AL-2", active=False)
    kept = listing(seller, "AL-3")  # listed earlier, its latest row was rejected
    now = timezone.now()
    RejectedSku.objects.create(
        seller=seller, sku="AL-3", reason="price -3.00 is negative", run_id=5, updated_at=now
    )
    RejectedSku.objects.create(
        seller=seller, sku="AL-4", reason="gtin is not valid", run_id=5, updated_at=now
    )
    listing(SellerFactory(username="bob"), "BOB-1")

    rows = {row["SKU"]: row for row in rows_of(fetch(client, status_import, right(status_import)))}

    assert set(rows) == {"AL-1", "AL-2", "AL-3", "AL-4"}
    assert rows["AL-1"] == {
        "SKU": "AL-1",
        "Marketplace listing id": str(live.pk),
        "Statut de l'annonce": "live",
        "Raison du refus": "",
        "Lien de l'annonce": f"https://market.example.com/l/{live.pk}",
        "Dernière mise à jour": live.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    assert rows["AL-2"]["Statut de l'annonce"] == "inactive"
    assert rows["AL-2"]["Marketplace listing id"] == str(gone.pk)
    assert (rows["AL-3"]["Statut de l'annonce"], rows["AL-3"]["Raison du refus"]) == (
        "rejected",
        "price -3.00 is negative",
    )
    assert rows["AL-3"]["Marketplace listing id"] == str(kept.pk)
    assert rows["AL-4"] == {
        "SKU": "AL-4",
        "Marketplace listing id": "",
        "Statut de l'annonce": "rejected",
        "Raison du refus": "gtin is not valid",
        "Lien de l'annonce": "",
        "Dernière mise à jour": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def test_awkward_skus_round_trip_through_the_csv(
    client: Client, status_import: StatusImport, seller: Seller
) -> None:
    awkward = ['Tasse, "grande" été', "Crème brûlée; 100 g", "Ünïcødé 👍"]
    for sku in awkward:
        listing(seller, sku)

    response = fetch(client, status_import, right(status_import))

    assert sorted(row["SKU"] for row in rows_of(response)) == sorted(awkward)


def test_the_query_count_does_not_grow_with_the_listings(
    client: Client, status_import: StatusImport, seller: Seller
) -> None:
    def queries_for_the_file() -> int:
        with CaptureQueriesContext(connection) as captured:
            body_of(fetch(client, status_import, right(status_import)))
        return len(captured.captured_queries)

    listing(seller, "A-0")
    RejectedSku.objects.create(
        seller=seller, sku="R-0", reason="bad", run_id=1, updated_at=timezone.now()
    )
    few = queries_for_the_file()
    Listing.objects.bulk_create(
        Listing(seller=seller, sku=f"B-{n:04d}", price=Decimal("1.00"), active=n % 2 == 0)
        for n in range(300)
    )
    RejectedSku.objects.bulk_create(
        RejectedSku(
            seller=seller, sku=f"B-{n:04d}", reason="bad", run_id=1, updated_at=timezone.now()
        )
        for n in range(0, 300, 7)
    )

    many = queries_for_the_file()

    assert many == few
    assert few <= 6


# --- the ingest keeps every rejected SKU ----------------------------------------------------


def ingest(make: Callable[..., FeedRun], data: bytes) -> FeedRun:
    run = make(data)
    finished = feed_run_ingest(run_id=run.pk)
    assert finished is not None
    return finished


def test_every_rejected_sku_is_kept_beyond_the_runs_own_list_and_cleared_when_accepted(
    received_run: Callable[..., FeedRun], seller: Seller
) -> None:
    bad = REJECTIONS_KEPT + 30
    rows = [product_row(n) for n in range(1, 11)] + [
        product_row(n, price="-1.00") for n in range(100, 100 + bad)
    ]
    first = ingest(received_run, csv_bytes(rows))

    assert first.rejected == bad
    assert len(first.rejections) == REJECTIONS_KEPT
    kept = dict(RejectedSku.objects.filter(seller=seller).values_list("sku", "reason"))
    assert len(kept) == bad
    assert kept["SKU-000100"] == "price -1.00 is negative"

    # When the seller fixes one price and drops another product entirely
    fixed = (
        [product_row(n) for n in range(1, 11)]
        + [product_row(100)]
        + [product_row(n, price="-1.00") for n in range(102, 100 + bad)]
    )
    ingest(received_run, csv_bytes(fixed))

    still = set(RejectedSku.objects.filter(seller=seller).values_list("sku", flat=True))
    assert "SKU-000100" not in still  # accepted again
    assert "SKU-000101" not in still  # no longer in the feed
    assert len(still) == bad - 2


@pytest.mark.parametrize(
    "key", ["%00", "the-status-key-01234567%00", "the-status-key", "x" * 25], ids=str
)
def test_a_key_the_app_never_generates_is_404_before_any_query(
    client: Client, status_import: StatusImport, key: str, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(0):
        response = client.get(
            f"/catalog/status/{key}/listing-status.csv",
            headers={"Authorization": right(status_import)},
        )
    assert response.status_code == 404
    assert b"Traceback" not in response.content


def test_head_answers_like_get_without_a_body(client: Client, status_import: StatusImport) -> None:
    url = f"/catalog/status/{status_import.status_key}/listing-status.csv"
    get = client.get(url, headers={"Authorization": right(status_import)})
    head = client.head(url, headers={"Authorization": right(status_import)})
    assert get.status_code == head.status_code == 200
    assert head["Content-Type"] == get["Content-Type"]
    assert head["Content-Disposition"] == get["Content-Disposition"]
    assert head["Cache-Control"] == "no-store"
    assert head.content == b""
    # And HEAD asks for the credentials as GET does
    refused = client.head(url)
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"].startswith("Basic ")
    assert client.head(url.replace(status_import.status_key, "y" * 24)).status_code == 404
