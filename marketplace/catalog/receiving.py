"""Receiving a feed file the platform delivers (PUT with HTTP Basic, per-seller
credentials): check the credentials in constant time, store the file (bounded size) and
queue its ingestion."""

from __future__ import annotations

import hmac
import tempfile
import uuid
from typing import TYPE_CHECKING

from django.core.files import File
from django.db import transaction
from django.views.decorators.debug import sensitive_variables

from marketplace.catalog import dispatch
from marketplace.catalog.feeds import feed_password_hash
from marketplace.catalog.ingest import feed_storage
from marketplace.catalog.models import CatalogSource, FeedRun

if TYPE_CHECKING:
    from _typeshed import SupportsRead  # a request body, a file: anything with read(n)

# A feed of 100 000 products is ~30 MB as plain CSV; far less gzipped.
FEED_MAX_BYTES = 512 * 1024 * 1024
CHUNK = 256 * 1024
# Compared against when the feed key is unknown, so a miss costs the same as a hit.
_DUMMY_HASH = "0" * 64


class FeedUnauthorized(Exception):
    pass


class FeedTooLarge(Exception):
    pass


@sensitive_variables("password")
def feed_source_authenticate(*, feed_key: str, username: str, password: str) -> CatalogSource:
    source = (
        CatalogSource.objects.filter(feed_key=feed_key, feed_state=CatalogSource.FeedState.ACTIVE)
        .only("id", "seller_id", "feed_username", "feed_password_hash", "compression", "delimiter")
        .first()
    )
    expected_hash = source.feed_password_hash if source else _DUMMY_HASH
    expected_user = source.feed_username if source else ""
    password_ok = hmac.compare_digest(feed_password_hash(password), expected_hash)
    user_ok = hmac.compare_digest(username.encode(), expected_user.encode())
    if source is None or not (password_ok and user_ok):
        raise FeedUnauthorized("unknown feed or wrong credentials")
    return source


def feed_file_receive(
    *, source: CatalogSource, stream: SupportsRead[bytes], file_name: str
) -> FeedRun:
    """Store the body (at most FEED_MAX_BYTES) and record a run queued for ingestion."""
    suffix = {"gzip": ".gz", "zip": ".zip"}.get(source.compression, "")
    name = f"{source.seller_id}/{uuid.uuid4().hex}.csv{suffix}"
    size = 0
    with tempfile.TemporaryFile() as spool:
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            if size > FEED_MAX_BYTES:
                raise FeedTooLarge(f"the file is larger than {FEED_MAX_BYTES} bytes")
            spool.write(chunk)
        spool.seek(0)
        stored = feed_storage().save(name, File(spool, name=name))
    try:
        with transaction.atomic():
            run = FeedRun.objects.create(
                seller_id=source.seller_id,
                file_path=stored,
                file_bytes=size,
                compression=source.compression,
                delimiter=source.delimiter,
                full_feed=True,
            )
            dispatch.feed_run_ingest_enqueue(run.pk)
    except Exception:
        feed_storage().delete(stored)
        raise
    return run
