"""Ingesting a received feed file into the seller's listings.

One transaction per run. The file is streamed through ``csv`` and each row checked once
by the feed's row rules (``parse.RowCheck``: a bad row is rejected with its line and
reason, never half-applied); every row goes into a staging table and is applied
set-based (``staging``): one merge that writes only changed listings, the rejected
SKUs in one statement, a full feed's deactivations in one ``UPDATE``. A file malformed
as a whole raises out of the transaction, so it changes nothing; the run is marked
failed with the reason. So does a full feed that would deactivate more than
FEED_MAX_DEACTIVATE_SHARE of the catalog: the run is held until staff confirm it
(``feed_run_confirm``). Duplicates are decided by the file alone: the first row of a SKU
decides, whatever becomes of it (a later row never takes a rejected first row's place).

Per seller, one ingest at a time and in the order the files arrived: a session advisory
lock on the seller (Postgres) is taken before a run is claimed and held until it is
finished, older waiting files of the seller are ingested first, and a run older than one
already applied is not applied (it would undo the newer file). A transient database
error (deadlock, serialization failure, lost connection) is retried a few times with
backoff, then fails the run with the error.

Memory stays flat whatever the file's size: one row, the COPY buffer and the first
REJECTIONS_KEPT rejections are all that is held.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.files.storage import storages
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from marketplace.catalog import dispatch
from marketplace.catalog.feeds import staging
from marketplace.catalog.feeds.parse import FeedMalformed, feed_rows
from marketplace.catalog.models import FeedRun

logger = logging.getLogger(__name__)

# The first key of the seller's advisory lock (the second is the seller's id): the
# namespace of feed ingestion among the app's advisory locks.
FEED_LOCK_NAMESPACE = 22
# Postgres error codes of transient failures: deadlock_detected, serialization_failure;
# the server shut the connection (admin_shutdown, crash_shutdown, cannot_connect_now);
# and class 08, connection exceptions.
TRANSIENT_SQLSTATES = frozenset({"40P01", "40001", "57P01", "57P02", "57P03"})
# A run keeps its first rejections for its page; the listing-status file has them all.
REJECTIONS_KEPT = staging.REJECTIONS_KEPT


@dataclass
class IngestCounts:
    rows: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deactivated: int = 0
    rejected: int = 0
    rejections: list[dict[str, Any]] = field(default_factory=list)
    # Single-line fields whose odd spacing became one space (parse.RowCheck).
    corrected: int = 0
    corrections: list[dict[str, Any]] = field(default_factory=list)


def feed_storage() -> Any:
    return storages["catalog_feeds"]


def feed_run_claim(*, run_id: int) -> FeedRun | None:
    """received → ingesting, atomically; None when another worker has it or it is done."""
    claimed = FeedRun.objects.filter(pk=run_id, status=FeedRun.Status.RECEIVED).update(
        status=FeedRun.Status.INGESTING, started_at=timezone.now(), attempts=F("attempts") + 1
    )
    return FeedRun.objects.get(pk=run_id) if claimed else None


class SellerFeedLock:
    """One feed ingestion at a time per seller: a Postgres session advisory lock, freed by
    Postgres itself if the worker dies (SQLite serializes writers anyway). Taken before
    any row lock, so ingests cannot deadlock on one another. A lost connection loses the
    lock: ``ensure`` takes it again on the connection Django opened since."""

    def __init__(self, seller_id: int) -> None:
        self.seller_id = seller_id
        self._held_on: object = None  # the DB-API connection that holds it

    def ensure(self) -> None:
        if connection.vendor != "postgresql":
            return
        connection.ensure_connection()
        if self._held_on is connection.connection:
            return
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [FEED_LOCK_NAMESPACE, self.seller_id])
        self._held_on = connection.connection

    def release(self) -> None:
        if self._held_on is None or self._held_on is not connection.connection:
            return  # never taken, or gone with its connection
        self._held_on = None
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_unlock(%s, %s)", [FEED_LOCK_NAMESPACE, self.seller_id]
                )
        except DatabaseError:
            connection.close()  # the connection is gone, and the lock with it


@contextmanager
def seller_feed_lock(seller_id: int) -> Iterator[SellerFeedLock]:
    lock = SellerFeedLock(seller_id)
    lock.ensure()
    try:
        yield lock
    finally:
        lock.release()


def feed_run_ingest(*, run_id: int) -> FeedRun | None:
    """Ingest one received run; returns it finished, or None when it was not claimable.

    The seller's older files still waiting are ingested first, so files apply in the order
    they arrived."""
    seller_id = FeedRun.objects.filter(pk=run_id).values_list("seller_id", flat=True).first()
    if seller_id is None:
        return None
    with seller_feed_lock(seller_id) as lock:
        older = FeedRun.objects.filter(
            seller_id=seller_id, status=FeedRun.Status.RECEIVED, pk__lt=run_id
        ).order_by("pk")
        for older_id in older.values_list("pk", flat=True):
            _claimed_ingest(older_id, lock)
        return _claimed_ingest(run_id, lock)


def _transient(exc: DatabaseError) -> bool:
    if isinstance(exc, InterfaceError):
        return True
    cause = exc.__cause__
    sqlstate = getattr(getattr(cause, "diag", None), "sqlstate", None) or getattr(
        cause, "sqlstate", None
    )
    if sqlstate in TRANSIENT_SQLSTATES or (sqlstate or "").startswith("08"):
        return True
    # A lost connection: psycopg raises OperationalError with no SQLSTATE.
    return isinstance(exc, OperationalError) and sqlstate is None and not connection.is_usable()


def _claimed_ingest(run_id: int, lock: SellerFeedLock) -> FeedRun | None:
    run = feed_run_claim(run_id=run_id)
    if run is None:
        return None
    started = time.monotonic()
    tries = settings.FEED_INGEST_DB_TRIES
    for attempt in range(1, tries + 1):
        try:
            return _ingest(run, started)
        except DatabaseError as exc:
            if not _transient(exc) or attempt == tries:
                logger.exception("feed run %s: database error", run.pk)
                if not connection.is_usable():
                    connection.close()  # the next query (recording the failure) reconnects
                return _finish(
                    run,
                    started,
                    status=FeedRun.Status.FAILED,
                    error=f"database error (tried {attempt} times): {exc}",
                )
            logger.warning("feed run %s: transient database error, retrying: %s", run.pk, exc)
            time.sleep(settings.FEED_INGEST_DB_BACKOFF * 2 ** (attempt - 1))
            if not connection.is_usable():
                connection.close()
            lock.ensure()  # again, if the lock went with a lost connection
    raise AssertionError("unreachable")


def _newer_applied(run: FeedRun) -> int | None:
    return (
        FeedRun.objects.filter(
            seller_id=run.seller_id, status=FeedRun.Status.SUCCEEDED, pk__gt=run.pk
        )
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )


def _ingest(run: FeedRun, started: float) -> FeedRun:
    newer = _newer_applied(run)
    if newer is not None:
        return _finish(
            run,
            started,
            status=FeedRun.Status.FAILED,
            error=(
                f"not applied: a newer file (run {newer}) was already applied, and this "
                "older one would undo it"
            ),
        )
    try:
        with feed_storage().open(run.file_path, "rb") as raw, transaction.atomic():
            counts = feed_stream_apply(
                raw,
                seller_id=run.seller_id,
                run_id=run.pk,
                compression=run.compression,
                delimiter=run.delimiter,
                full_feed=run.full_feed,
                max_deactivate_share=(
                    None
                    if run.deactivation_confirmed_by_id is not None
                    else settings.FEED_MAX_DEACTIVATE_SHARE
                ),
            )
    except DeactivationHeld as exc:
        return _finish(run, started, status=FeedRun.Status.HELD, error=str(exc), counts=exc.counts)
    except NoValidRows as exc:
        return _finish(
            run,
            started,
            status=FeedRun.Status.FAILED,
            error=str(exc),
            counts=exc.counts,
            malformed=True,
        )
    except FeedMalformed as exc:
        return _finish(run, started, status=FeedRun.Status.FAILED, error=str(exc), malformed=True)
    except FileNotFoundError:
        return _finish(run, started, status=FeedRun.Status.FAILED, error="the file is gone")
    except DatabaseError:
        raise  # retried when transient (_claimed_ingest)
    except Exception as exc:
        logger.exception("feed run %s: ingestion crashed", run.pk)
        return _finish(
            run, started, status=FeedRun.Status.FAILED, error=f"ingestion error: {exc}"[:500]
        )
    return _finish(run, started, status=FeedRun.Status.SUCCEEDED, counts=counts)


def _finish(
    run: FeedRun,
    started: float,
    *,
    status: str,
    error: str = "",
    counts: IngestCounts | None = None,
    malformed: bool = False,
) -> FeedRun:
    counts = counts or IngestCounts()
    run.status = status
    run.error = error[:500]
    run.malformed = malformed
    run.finished_at = timezone.now()
    run.duration_ms = int((time.monotonic() - started) * 1000)
    for name in ("rows", "created", "updated", "unchanged", "deactivated", "rejected", "corrected"):
        setattr(run, name, getattr(counts, name))
    run.rejections = counts.rejections
    run.corrections = counts.corrections
    run.save()
    return run


class NoValidRows(FeedMalformed):
    """Every row was rejected; ``counts`` says which and why (nothing was applied)."""

    def __init__(self, message: str, counts: IngestCounts) -> None:
        super().__init__(message)
        self.counts = counts


class DeactivationHeld(FeedMalformed):
    """A full feed would deactivate too much of the catalog: held (nothing applied) until
    staff confirm it (``feed_run_confirm``)."""

    def __init__(self, message: str, counts: IngestCounts) -> None:
        super().__init__(message)
        self.counts = counts


def feed_stream_apply(
    raw: Any,
    *,
    seller_id: int,
    run_id: int,
    compression: str,
    delimiter: str,
    full_feed: bool,
    max_deactivate_share: float | None = None,
) -> IngestCounts:
    """Parse, validate and apply a feed stream (call inside a transaction).

    The outcome depends on the file alone, never on what existed before: the first row of
    a SKU decides (valid, it is applied; rejected, the SKU is rejected), later rows of that
    SKU are rejected as duplicates, and a rejected row leaves its listing as it was (not
    updated, not deactivated by a full feed)."""
    counts = IngestCounts()
    now = timezone.now()
    with connection.cursor() as cursor:
        staging.stage_create(cursor)
        accepted = rejected = 0
        with (
            feed_rows(raw, compression=compression, delimiter=delimiter) as feed,
            staging.stage_writer(cursor) as write,
        ):
            check, ids_of = feed.check, feed.check.ids_of
            blank = staging.REJECTED_BLANK
            for line, row in feed.rows:
                values = check(line, row)
                if values.__class__ is str:
                    rejected += 1
                    sku, record_id = ids_of(row)
                    write((line, values[:300], sku, *blank, record_id))
                else:
                    accepted += 1
                    write((line, None, *values))
            counts.corrected, counts.corrections = check.corrected, check.corrections
        duplicates = staging.stage_duplicates_mark(cursor)
        counts.rows = accepted + rejected
        counts.rejected = rejected + duplicates
        counts.rejections = staging.stage_rejections(cursor) if counts.rejected else []
        if accepted == 0:
            # Every row bad (or none at all): most likely a mapping or export problem. A
            # full feed would otherwise deactivate the whole catalog.
            raise NoValidRows(
                f"no valid row in the file ({counts.rows} read, {counts.rejected} rejected): "
                "nothing was changed",
                counts,
            )
        active_before = (
            staging.listings_active_count(cursor, seller_id=seller_id) if full_feed else 0
        )
        counts.created, counts.updated = staging.stage_merge(
            cursor, seller_id=seller_id, run_id=run_id, now=now
        )
        counts.unchanged = accepted - duplicates - counts.created - counts.updated
        staging.stage_rejected_keep(
            cursor,
            seller_id=seller_id,
            run_id=run_id,
            full_feed=full_feed,
            now=now,
            any_rejected=counts.rejected > 0,
        )
        # With no active listing before the merge, every active one now is a row of this
        # file: nothing to deactivate (a first ingest skips the anti-join over it all).
        if full_feed and active_before:
            counts.deactivated = staging.stage_deactivate_missing(
                cursor, seller_id=seller_id, now=now
            )
            would = counts.deactivated
            if (
                max_deactivate_share is not None
                and active_before
                and would > max_deactivate_share * active_before
            ):
                # Raised after the statements: the transaction rolls all of them back.
                raise DeactivationHeld(
                    f"held: would deactivate {would} of {active_before} active listings "
                    f"({100 * would / active_before:.0f} %); nothing was applied until staff "
                    "confirm it",
                    counts,
                )
        staging.stage_drop(cursor)
    return counts


def feed_run_confirm(*, run_id: int, actor: Any) -> FeedRun:
    """Staff: apply a held run after all (its deactivations confirmed) by queueing it again.

    Only the seller's latest file: an older one would undo what a newer file set."""
    run = FeedRun.objects.get(pk=run_id)
    newer = FeedRun.objects.filter(seller_id=run.seller_id, received_at__gt=run.received_at)
    if newer.exists():
        return run
    updated = (
        FeedRun.objects.filter(pk=run_id, status=FeedRun.Status.HELD)
        .exclude(file_path="")
        .update(status=FeedRun.Status.RECEIVED, error="", deactivation_confirmed_by=actor)
    )
    run.refresh_from_db()
    if updated:
        dispatch.feed_run_ingest_enqueue(run_id)
    return run


def feed_run_retry(*, run_id: int, actor: Any) -> FeedRun:
    """Staff: put a failed run back to received (its file is kept) and queue it, with its
    count of attempts back to zero (a run failed for good after its worker died)."""
    # A run whose file was pruned (FEED_FILE_RETENTION_DAYS) cannot be read again.
    updated = (
        FeedRun.objects.filter(pk=run_id, status=FeedRun.Status.FAILED)
        .exclude(file_path="")
        .update(
            status=FeedRun.Status.RECEIVED,
            error="",
            malformed=False,
            attempts=0,
            retried_by=actor,
        )
    )
    run = FeedRun.objects.get(pk=run_id)
    if updated:
        dispatch.feed_run_ingest_enqueue(run_id)
    return run
