"""The feed receiving endpoint: HTTP Basic with the seller's feed credentials, the file
stored and ingested, everything else refused. The same at both URLs a platform may PUT
to: below the folder (``host/`` + ``file_name``, reading A) and the folder itself
(``host``, reading B)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from marketplace.catalog.feeds import feed_password_hash
from marketplace.catalog.models import CatalogSource, FeedRun, Listing
from sellers.models import Seller
from tests.factories import CatalogSourceFactory
from tests.marketplace.catalog.feed_files import csv_bytes, gzipped, product_row

pytestmark = pytest.mark.django_db

PASSWORD = "feed-password-for-tests-0123456789"
KEY = "key-abc-0123456789abcdef"
# Where the platform PUTs: below the folder given as ``host``, or the folder itself.
AT = pytest.mark.parametrize("at", ["file", "folder"])


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
    source: CatalogSource, feed_folder: Path, monkeypatch: pytest.MonkeyPatch, at: str
) -> None:
    monkeypatch.setattr("marketplace.catalog.receive_views.FEED_MAX_BYTES", 10)
    monkeypatch.setattr("marketplace.catalog.receiving.FEED_MAX_BYTES", 10)

    response = put(b"x" * 11, at=at)

    assert response.status_code == 413
    assert response.json()["status"] == "fail"
    assert not FeedRun.objects.exists()


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
