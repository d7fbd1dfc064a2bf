"""Receiving a feed file the platform delivers (PUT with HTTP Basic, per-seller
credentials): check the credentials in constant time, refuse what cannot be a feed file
before storing anything (the first bytes against the feed's compression, the size, the
seller's caps), stream the rest straight to storage and queue its ingestion."""

from __future__ import annotations

import hmac
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import IO, TYPE_CHECKING, cast

from django.conf import settings
from django.core.files import File
from django.db import connection, transaction
from django.db.models import Min, Sum
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from marketplace.catalog import dispatch
from marketplace.catalog.feeds.ingest import feed_storage
from marketplace.catalog.feeds.provision import feed_password_hash
from marketplace.catalog.models import CatalogSource, FeedRun

if TYPE_CHECKING:
    from _typeshed import SupportsRead  # a request body, a file: anything with read(n)

CHUNK = 256 * 1024
# Bytes read before anything is stored, to tell a feed file from garbage.
HEAD_BYTES = 1024
MAGIC = {"gzip": b"\x1f\x8b", "zip": b"PK\x03\x04"}
# The first key of the advisory lock that holds a seller's delivery (the seller is the
# second): "FEED" in ASCII, apart from any other lock the app might take.
DELIVERY_LOCK_SPACE = 0x46454544
# Compared against when the feed key is unknown, so a miss costs the same as a hit.
_DUMMY_HASH = "0" * 64


class FeedUnauthorized(Exception):
    pass


class FeedRefused(Exception):
    """A delivery refused at the door, nothing stored: ``status`` is the HTTP answer and
    the message names the reason (never the body's bytes)."""

    status = 400

    def __init__(self, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class FeedTooLarge(FeedRefused):
    status = 413


class FeedNotAFeedFile(FeedRefused):
    status = 415


class FeedTooManyDeliveries(FeedRefused):
    status = 429


class FeedStorageFull(FeedRefused):
    # 507: the seller's share of storage is used up until older files are pruned; a
    # sender that retries later may well succeed (unlike 413, which says "never").
    status = 507


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


def feed_delivery_admit(*, source: CatalogSource, declared_bytes: int) -> None:
    """Refuse a delivery the size limit or the seller's caps forbid, before reading it."""
    if declared_bytes > settings.FEED_MAX_BYTES:
        raise FeedTooLarge(f"the file is larger than {settings.FEED_MAX_BYTES} bytes")
    if declared_bytes == 0:
        raise FeedRefused("the file is empty")
    now = timezone.now()
    window = now - timedelta(hours=1)
    recent = FeedRun.objects.filter(seller_id=source.seller_id, received_at__gte=window)
    limit = settings.FEED_SELLER_MAX_DELIVERIES_PER_HOUR
    if recent.count() >= limit:
        oldest = recent.aggregate(oldest=Min("received_at"))["oldest"] or now
        wait = max(1, int((oldest + timedelta(hours=1) - now).total_seconds()) + 1)
        raise FeedTooManyDeliveries(
            f"more than {limit} deliveries in an hour for this feed", retry_after=wait
        )
    stored = (
        FeedRun.objects.filter(seller_id=source.seller_id)
        .exclude(file_path="")
        .aggregate(total=Sum("file_bytes"))["total"]
        or 0
    )
    if stored + declared_bytes > settings.FEED_SELLER_MAX_STORED_BYTES:
        raise FeedStorageFull(
            "this seller's stored feed files would exceed "
            f"{settings.FEED_SELLER_MAX_STORED_BYTES} bytes; older files are deleted "
            "as they age, try again later"
        )


def feed_head_check(head: bytes, *, compression: str) -> None:
    """Refuse a body whose first bytes cannot start a file of the feed's compression."""
    magic = MAGIC.get(compression)
    if magic is not None:
        if not head.startswith(magic):
            raise FeedNotAFeedFile(f"the file is not {compression}: it does not start as one")
        return
    for kind, kind_magic in MAGIC.items():
        if head.startswith(kind_magic):
            raise FeedNotAFeedFile(f"the file is {kind}-compressed; the feed is plain CSV")
    # Plain CSV is read as UTF-8 (parse.py): a NUL byte or bytes that are not UTF-8
    # in the first KB mean a binary file, never a feed.
    if b"\x00" in head:
        raise FeedNotAFeedFile("the file is not plain CSV text: it holds NUL bytes")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # The head may end in the middle of a character: only an error before the end.
        if exc.reason != "unexpected end of data":
            raise FeedNotAFeedFile("the file is not plain CSV text: it is not UTF-8") from exc


class _CountedBody:
    """The body as a file for storage: the head already read, then the rest, counted
    against the limit and the declared length."""

    def __init__(self, head: bytes, stream: SupportsRead[bytes], *, declared: int) -> None:
        self._pending = head
        self._stream = stream
        self._declared = declared
        self.size = len(head)

    def read(self, size: int = -1) -> bytes:
        if self._pending:
            chunk, self._pending = self._pending, b""
            return chunk
        chunk = self._stream.read(CHUNK if size is None or size < 0 else size)
        self.size += len(chunk)
        if self.size > min(self._declared, settings.FEED_MAX_BYTES):
            raise FeedTooLarge(
                f"the file is larger than {min(self._declared, settings.FEED_MAX_BYTES)} bytes"
            )
        return chunk


def _read_head(stream: SupportsRead[bytes], declared: int) -> bytes:
    head = b""
    want = min(HEAD_BYTES, declared)
    while len(head) < want and (chunk := stream.read(want - len(head))):
        head += chunk
    return head


@contextmanager
def _one_delivery_at_a_time(seller_id: int) -> Iterator[None]:
    """A seller's deliveries one at a time (a Postgres session lock while it streams), so
    parallel uploads cannot each pass the caps that count only what is stored. SQLite
    (development) has no such lock and runs one request at a time anyway."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [DELIVERY_LOCK_SPACE, seller_id])
        if not cursor.fetchone()[0]:
            raise FeedTooManyDeliveries(
                "another delivery for this feed is still being received", retry_after=60
            )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [DELIVERY_LOCK_SPACE, seller_id])


def feed_file_receive(
    *, source: CatalogSource, stream: SupportsRead[bytes], file_name: str, declared_bytes: int
) -> FeedRun:
    """Check, store (straight to storage, no spool) and record a run queued for ingestion.
    Raises a FeedRefused with nothing stored and no run when the delivery is refused."""
    with _one_delivery_at_a_time(source.seller_id):
        return _receive(source=source, stream=stream, declared_bytes=declared_bytes)


def _receive(*, source: CatalogSource, stream: SupportsRead[bytes], declared_bytes: int) -> FeedRun:
    feed_delivery_admit(source=source, declared_bytes=declared_bytes)
    head = _read_head(stream, declared_bytes)
    feed_head_check(head, compression=source.compression)
    suffix = {"gzip": ".gz", "zip": ".zip"}.get(source.compression, "")
    name = f"{source.seller_id}/{uuid.uuid4().hex}.csv{suffix}"
    body = _CountedBody(head, stream, declared=declared_bytes)
    storage = feed_storage()
    try:
        stored = storage.save(name, File(cast("IO[bytes]", body), name=name))
    except BaseException:
        storage.delete(name)  # a partly written file; none at all is not an error
        raise
    if body.size != declared_bytes:
        storage.delete(stored)
        raise FeedRefused(
            f"the body ended after {body.size} of the {declared_bytes} bytes Content-Length "
            "announced: nothing was stored"
        )
    try:
        with transaction.atomic():
            run = FeedRun.objects.create(
                seller_id=source.seller_id,
                file_path=stored,
                file_bytes=body.size,
                compression=source.compression,
                delimiter=source.delimiter,
                full_feed=True,
            )
            dispatch.feed_run_ingest_enqueue(run.pk)
    except Exception:
        storage.delete(stored)
        raise
    return run
