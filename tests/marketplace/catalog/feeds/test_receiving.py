"""The feed receiving endpoint: HTTP Basic with the seller's feed credentials, the file
stored and ingested, everything else refused. The same at both URLs a platform may PUT
to: below the folder (``host/`` + ``file_name``, reading A) and the folder itself
(``host``, reading B)."""

from __future__ import annotations

import base64
import http.client
import io
import os
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from marketplace.catalog.feeds.provision import feed_password_hash
from marketplace.catalog.models import CatalogSource, FeedRun, Listing
from sellers.models import Seller
from tests.marketplace.catalog.feed_files import csv_bytes, gzipped, product_row
from tests.support.factories import CatalogSourceFactory

pytestmark = pytest.mark.django_db

PASSWORD = "feed-password-for-tests-0123456789"
KEY = "key-abc-0123456789abcdef"
# Where the platform PUTs: below the folder given as ``host``, or the folder itself.
AT = pytest.mark.parametrize("at", ["file", "folder"])


def stored_files(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file()] if folder.exists() else []


def feed_url(key: str, at: str) -> str:
    return f"/catalog/feeds/{key}/" + ("catalog-1.csv.gz" if at == "file" else "")


@pytest.fixture
def source(seller: Seller) -> CatalogSource:
    return CatalogSourceFactory(
        seller=seller,
        account_id="7",
        account_name="Alice",
        db_id="11",
        db_name="Alice products",
        feed_state=CatalogSource.FeedState.ACTIVE,
        export_id="5",
        feed_key="key-abc-0123456789abcdef",
        feed_username="feed-1",
        feed_password_hash=feed_password_hash(PASSWORD),
        compression="gzip",
    )


def put(
    body: bytes,
    *,
    user: str = "feed-1",
    password: str = PASSWORD,
    key: str = KEY,
    auth: bool = True,
    at: str = "file",
    client: Client | None = None,
) -> Any:
    headers = {}
    if auth:
        encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["HTTP_AUTHORIZATION"] = f"Basic {encoded}"
    return (client or Client()).generic(
        "PUT",
        feed_url(key, at),
        body,
        content_type="application/gzip",
        **headers,
    )


@AT
def test_a_delivered_file_is_stored_answered_201_and_ingested(
    source: CatalogSource,
    eager_tasks: None,
    feed_folder: Path,
    django_capture_on_commit_callbacks: Any,
    at: str,
) -> None:
    body = gzipped(csv_bytes(product_row(n) for n in range(1, 11)))

    # An API endpoint with its own credentials: a CSRF check would answer Django's 403
    with django_capture_on_commit_callbacks(execute=True):
        response = put(body, at=at, client=Client(enforce_csrf_checks=True))

    assert response.status_code == 201
    run = FeedRun.objects.get(pk=response.json()["run_id"])
    assert run.status == "succeeded"
    assert run.created == 10
    assert run.file_bytes == len(body)
    assert (feed_folder / run.file_path).read_bytes() == body
    assert Listing.objects.filter(seller=source.seller, active=True).count() == 10


@pytest.mark.parametrize(
    "kwargs",
    [
        {"password": "wrong"},
        {"user": "feed-2"},
        {"key": "unknown-feed-0123456789a"},
        {"auth": False},
    ],
    ids=["wrong-password", "wrong-user", "unknown-feed", "no-credentials"],
)
@AT
def test_wrong_or_missing_credentials_are_refused_and_nothing_is_stored(
    source: CatalogSource, feed_folder: Path, kwargs: dict, at: str
) -> None:
    response = put(b"anything", at=at, **kwargs)

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Basic")
    assert not FeedRun.objects.exists()
    assert not feed_folder.exists() or not any(feed_folder.rglob("*.gz"))


@AT
def test_a_removed_feed_no_longer_accepts_files(source: CatalogSource, at: str) -> None:
    source.feed_state = CatalogSource.FeedState.NONE
    source.save()

    assert put(b"x", at=at).status_code == 401


@AT
def test_a_file_over_the_size_limit_is_413_and_nothing_is_stored(
    source: CatalogSource, feed_folder: Path, settings: Any, at: str
) -> None:
    settings.FEED_MAX_BYTES = 10

    response = put(gzipped(b"sku,price\n" * 5)[:11], at=at)

    assert response.status_code == 413
    assert response.json()["status"] == "fail"
    assert not FeedRun.objects.exists()
    assert stored_files(feed_folder) == []


@AT
def test_only_put_is_accepted(source: CatalogSource, at: str) -> None:
    for method in ("GET", "POST", "DELETE"):
        assert Client().generic(method, feed_url(KEY, at)).status_code == 405


@AT
@pytest.mark.parametrize(
    "key",
    ["%00", "key-abc-0123456789abcde%00", "key-abc-0123456789abcde", "key-abc-0123456789abcdefg"],
    ids=["nul", "nul-at-the-end", "one-short", "one-long"],
)
def test_a_key_the_app_never_generates_is_404_before_any_query(
    source: CatalogSource, key: str, django_assert_num_queries: Any, at: str
) -> None:
    # Given a feed URL whose key is not 24 characters of the token alphabet
    with django_assert_num_queries(0):
        response = put(b"x", key=key, at=at)
    # Then 404, no traceback, nothing stored
    assert response.status_code == 404
    assert not FeedRun.objects.exists()


def test_the_generated_key_matches_the_url_pattern() -> None:
    from django.urls import reverse

    from marketplace.catalog.url_keys import url_key_new

    key = url_key_new()
    assert reverse("catalog_feeds:receive_folder", kwargs={"feed_key": key}) == (
        f"/catalog/feeds/{key}/"
    )


# --- The door: what cannot be a feed file is refused before anything is stored ---------


@AT
def test_random_bytes_to_a_gzip_feed_are_refused_415_before_anything_is_stored(
    source: CatalogSource, feed_folder: Path, at: str
) -> None:
    body = b"\x00\x01" + os.urandom(64 * 1024)  # never the gzip magic 1f 8b

    response = put(body, at=at)

    assert response.status_code == 415
    assert response.json() == {
        "status": "fail",
        "message": "the file is not gzip: it does not start as one",
    }
    assert not FeedRun.objects.exists()
    assert stored_files(feed_folder) == []


@pytest.mark.parametrize(
    ("compression", "body", "reason"),
    [
        ("zip", gzipped(b"sku,price\n"), "not zip"),
        ("", b"sku,price\nA-1,9.99\n\x00\x00binary", "NUL bytes"),
        ("", gzipped(b"sku,price\nA-1,9.99\n"), "gzip-compressed"),
        ("", b"sku,price\nA-1,\xff\xfe9.99\n", "not UTF-8"),
    ],
    ids=["gzip-to-a-zip-feed", "nul-in-a-plain-feed", "gzip-to-a-plain-feed", "not-utf8"],
)
def test_a_body_that_does_not_match_the_feeds_compression_is_415(
    source: CatalogSource, feed_folder: Path, compression: str, body: bytes, reason: str
) -> None:
    source.compression = compression
    source.save()

    response = put(body)

    assert response.status_code == 415
    assert reason in response.json()["message"]
    assert body.hex()[:8] not in response.content.decode()  # never echoes the body
    assert not FeedRun.objects.exists()
    assert stored_files(feed_folder) == []


def test_plain_utf8_text_cut_mid_character_at_the_first_kb_is_accepted(
    source: CatalogSource, feed_folder: Path
) -> None:
    source.compression = ""
    source.save()
    body = b"sku,title,price\n" + ("A-1,Caf\u00e9 cr\u00e8me,9.99\n" * 200).encode()

    assert put(body).status_code == 201
    assert (feed_folder / FeedRun.objects.get().file_path).read_bytes() == body


def test_an_empty_body_is_400_and_nothing_is_stored(
    source: CatalogSource, feed_folder: Path
) -> None:
    encoded = base64.b64encode(f"feed-1:{PASSWORD}".encode()).decode()
    response = Client().generic(
        "PUT", feed_url(KEY, "file"), b"", CONTENT_LENGTH="0", HTTP_AUTHORIZATION=f"Basic {encoded}"
    )

    assert response.status_code == 400
    assert response.json()["message"] == "the file is empty"
    assert not FeedRun.objects.exists()


def test_a_body_shorter_than_its_content_length_is_refused_and_its_start_deleted(
    source: CatalogSource, feed_folder: Path
) -> None:
    from marketplace.catalog.feeds.receive import FeedRefused, feed_file_receive

    body = gzipped(b"sku,price\n" * 100)
    with pytest.raises(FeedRefused, match="ended after"):
        feed_file_receive(
            source=source, stream=io.BytesIO(body), file_name="f", declared_bytes=len(body) + 5
        )
    assert not FeedRun.objects.exists()
    assert stored_files(feed_folder) == []


def test_a_body_longer_than_announced_stops_at_the_limit_and_is_deleted(
    source: CatalogSource, feed_folder: Path
) -> None:
    # A stream that does not stop at Content-Length (Django's request does) is cut.
    from marketplace.catalog.feeds.receive import FeedTooLarge, feed_file_receive

    body = gzipped(os.urandom(600 * 1024))
    with pytest.raises(FeedTooLarge):
        feed_file_receive(
            source=source, stream=io.BytesIO(body), file_name="f", declared_bytes=2000
        )
    assert not FeedRun.objects.exists()
    assert stored_files(feed_folder) == []


def _raw_put(url: str, headers: dict[str, str], chunks: list[bytes]) -> tuple[int, bytes]:
    """A PUT over a real socket, the body sent chunked (no Content-Length)."""
    host_port = url.removeprefix("http://")
    connection = http.client.HTTPConnection(host_port, timeout=20)
    try:
        connection.request(
            "PUT", feed_url(KEY, "file"), body=iter(chunks), headers=headers, encode_chunked=True
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_a_chunked_body_without_content_length_is_411_never_an_empty_success(
    source: CatalogSource, feed_folder: Path, live_server: Any
) -> None:
    # Django's WSGI request reads a body without Content-Length as empty: accepting it
    # would answer 201 for an empty file. Over real HTTP, chunked, it is refused.
    encoded = base64.b64encode(f"feed-1:{PASSWORD}".encode()).decode()
    body = gzipped(csv_bytes(product_row(n) for n in range(1, 4)))

    status, answer = _raw_put(
        live_server.url,
        {"Authorization": f"Basic {encoded}", "Transfer-Encoding": "chunked"},
        [body[:10], body[10:]],
    )

    assert status == 411
    assert b"Content-Length" in answer
    assert not FeedRun.objects.exists()
    assert stored_files(feed_folder) == []


def test_over_the_deliveries_per_hour_a_seller_gets_429_with_retry_after(
    source: CatalogSource, feed_folder: Path, settings: Any
) -> None:
    settings.FEED_SELLER_MAX_DELIVERIES_PER_HOUR = 2
    body = gzipped(csv_bytes(product_row(n) for n in range(1, 4)))
    assert [put(body).status_code for _ in range(2)] == [201, 201]

    response = put(body)

    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 3601
    assert "deliveries in an hour" in response.json()["message"]
    assert FeedRun.objects.count() == 2
    assert len(stored_files(feed_folder)) == 2


def test_over_the_sellers_stored_bytes_a_delivery_is_507_until_files_are_pruned(
    source: CatalogSource, feed_folder: Path, settings: Any
) -> None:
    body = gzipped(csv_bytes(product_row(n) for n in range(1, 4)))
    settings.FEED_SELLER_MAX_STORED_BYTES = len(body) * 3 // 2
    assert put(body).status_code == 201

    refused = put(body)

    assert refused.status_code == 507
    assert "stored feed files" in refused.json()["message"]
    assert FeedRun.objects.count() == 1
    assert len(stored_files(feed_folder)) == 1
    # Once the kept file is pruned, the seller's share is free again.
    FeedRun.objects.update(file_path="")
    assert put(body).status_code == 201


def test_a_second_delivery_while_one_is_being_received_is_429(
    source: CatalogSource, feed_folder: Path
) -> None:
    # Given a delivery for the seller still streaming in another request (its own session)
    import psycopg
    from django.db import connection

    from marketplace.catalog.feeds.receive import DELIVERY_LOCK_SPACE

    if connection.vendor != "postgresql":
        pytest.skip("the per-seller delivery lock is Postgres's")
    params = connection.get_connection_params()
    other = psycopg.connect(
        **{k: v for k, v in params.items() if k in {"dbname", "user", "password", "host", "port"}}
    )
    try:
        other.execute("SELECT pg_advisory_lock(%s, %s)", [DELIVERY_LOCK_SPACE, source.seller_id])

        response = put(gzipped(csv_bytes(product_row(n) for n in range(1, 4))))

        assert response.status_code == 429
        assert response["Retry-After"] == "60"
        assert not FeedRun.objects.exists()
        assert stored_files(feed_folder) == []
        # (unlocked here: a closed session's locks go only once its backend has exited,
        # which a loaded server may take a moment to do)
        other.execute("SELECT pg_advisory_unlock(%s, %s)", [DELIVERY_LOCK_SPACE, source.seller_id])
    finally:
        other.close()
    # Once it is done, the next delivery is taken
    assert put(gzipped(csv_bytes(product_row(n) for n in range(1, 4)))).status_code == 201
