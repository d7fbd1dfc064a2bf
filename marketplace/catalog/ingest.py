"""Ingesting a received feed file into the seller's listings.

One transaction per run: rows are validated one by one (a bad row is rejected with its
line and reason, never half-applied), valid rows are upserted in batches
(``INSERT … ON CONFLICT (seller, sku) DO UPDATE``), and a full feed then deactivates the
seller's listings it did not carry. A file malformed as a whole raises out of the
transaction, so it changes nothing; the run is marked failed with the reason. So does a
full feed that would deactivate more than FEED_MAX_DEACTIVATE_SHARE of the catalog: the
run is held until staff confirm it (``feed_run_confirm``). Duplicates are decided by the
file alone: the first valid row of a SKU wins.

Memory stays flat whatever the file's size: one batch of rows and a bounded list of
rejections are all that is held.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.files.storage import storages
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from marketplace.catalog import dispatch
from marketplace.catalog.feed_parser import FeedMalformed, Record, feed_records, row_validate
from marketplace.catalog.mapping import LISTING_COLUMNS
from marketplace.catalog.models import FeedRun, Listing, RejectedSku
from marketplace.catalog.rejected import (
    rejected_skus_clear,
    rejected_skus_keep,
    rejected_skus_prune,
)
from marketplace.text_rules import first_refused

logger = logging.getLogger(__name__)

BATCH_SIZE = 1000
REJECTIONS_KEPT = 200
# What a feed row sets on its listing: every listing column but the key.
CONTENT_FIELDS = tuple(column for column in LISTING_COLUMNS if column != "sku")
UPDATE_FIELDS = (*CONTENT_FIELDS, "active", "last_run_id", "updated_at")


@dataclass
class IngestCounts:
    rows: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deactivated: int = 0
    rejected: int = 0
    rejections: list[dict[str, Any]] = field(default_factory=list)

    def reject(self, line: int, sku: str, reason: str) -> None:
        self.rejected += 1
        if len(self.rejections) < REJECTIONS_KEPT:
            self.rejections.append({"line": line, "sku": sku[:128], "reason": reason[:300]})


def feed_storage() -> Any:
    return storages["catalog_feeds"]


def feed_run_claim(*, run_id: int) -> FeedRun | None:
    """received → ingesting, atomically; None when another worker has it or it is done."""
    claimed = FeedRun.objects.filter(pk=run_id, status=FeedRun.Status.RECEIVED).update(
        status=FeedRun.Status.INGESTING, started_at=timezone.now(), attempts=F("attempts") + 1
    )
    return FeedRun.objects.get(pk=run_id) if claimed else None


def feed_run_ingest(*, run_id: int) -> FeedRun | None:
    """Ingest one received run; returns it finished, or None when it was not claimable."""
    run = feed_run_claim(run_id=run_id)
    if run is None:
        return None
    started = time.monotonic()
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
    for name in ("rows", "created", "updated", "unchanged", "deactivated", "rejected"):
        setattr(run, name, getattr(counts, name))
    run.rejections = counts.rejections
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
    """Parse, validate and upsert a feed stream (call inside a transaction).

    The outcome depends on the file alone, never on what existed before: the first valid
    row of a SKU wins, later rows of that SKU are rejected as duplicates, and a rejected
    row leaves its listing as it was (not updated, not deactivated by a full feed)."""
    counts = IngestCounts()
    active_before = (
        Listing.objects.filter(seller_id=seller_id, active=True).count() if full_feed else 0
    )
    batch: list[tuple[Record, dict[str, Any]]] = []
    # Every rejected SKU with its reason, for the listing-status file (flushed by batch).
    rejected: dict[str, str] = {}
    with feed_records(raw, compression=compression, delimiter=delimiter) as records:
        for record in records:
            counts.rows += 1
            values = row_validate(record)
            if isinstance(values, str):
                sku = record.values.get("sku", "").strip()
                if first_refused(sku) is not None:
                    sku = ""  # never stored: Postgres refuses a NUL even in JSON
                counts.reject(record.line, sku, values)
                if sku:
                    rejected[sku] = values
                if len(rejected) >= BATCH_SIZE:
                    _keep_rejected(seller_id, run_id, rejected)
                    rejected = {}
                continue
            batch.append((record, values))
            if len(batch) >= BATCH_SIZE:
                # Rejections first: a SKU rejected then accepted in one window ends accepted.
                _keep_rejected(seller_id, run_id, rejected)
                rejected = {}
                _apply_batch(batch, seller_id=seller_id, run_id=run_id, counts=counts)
                batch = []
    _keep_rejected(seller_id, run_id, rejected)
    if batch:
        _apply_batch(batch, seller_id=seller_id, run_id=run_id, counts=counts)
    if counts.created + counts.updated + counts.unchanged == 0:
        # Every row bad (or none at all): most likely a mapping or export problem. A full
        # feed would otherwise deactivate the whole catalog.
        raise NoValidRows(
            f"no valid row in the file ({counts.rows} read, {counts.rejected} rejected): "
            "nothing was changed",
            counts,
        )
    if full_feed:
        rejected_skus_prune(seller_id=seller_id, run_id=run_id)
        # A rejected row leaves its listing as it was: not deactivated as "missing" either
        # (the row is in the feed; its data is wrong).
        missing = (
            Listing.objects.filter(seller_id=seller_id, active=True)
            .exclude(last_run_id=run_id)
            .exclude(
                sku__in=RejectedSku.objects.filter(seller_id=seller_id, run_id=run_id).values("sku")
            )
        )
        if max_deactivate_share is not None and active_before:
            would = missing.count()
            if would > max_deactivate_share * active_before:
                raise DeactivationHeld(
                    f"held: would deactivate {would} of {active_before} active listings "
                    f"({100 * would / active_before:.0f} %); nothing was applied until staff "
                    "confirm it",
                    counts,
                )
        counts.deactivated = missing.update(active=False, updated_at=timezone.now())
    return counts


def _keep_rejected(seller_id: int, run_id: int, reasons: dict[str, str]) -> None:
    """Record the rejected SKUs but those a valid row of this run already listed (the first
    valid row of a SKU wins; a later bad row of it is only counted)."""
    if not reasons:
        return
    accepted = set(
        Listing.objects.filter(
            seller_id=seller_id, last_run_id=run_id, sku__in=list(reasons)
        ).values_list("sku", flat=True)
    )
    rejected_skus_keep(
        seller_id=seller_id,
        run_id=run_id,
        reasons={sku: reason for sku, reason in reasons.items() if sku not in accepted},
    )


def _apply_batch(
    batch: list[tuple[Record, dict[str, Any]]],
    *,
    seller_id: int,
    run_id: int,
    counts: IngestCounts,
) -> None:
    skus = [values["sku"] for _, values in batch]
    existing = {
        row[0]: row[1:]
        for row in Listing.objects.filter(seller_id=seller_id, sku__in=skus).values_list(
            "sku", *CONTENT_FIELDS, "active", "last_run_id"
        )
    }
    now = timezone.now()
    listings: list[Listing] = []
    in_batch: dict[str, int] = {}
    for record, values in batch:
        sku = values["sku"]
        previous = existing.get(sku)
        if sku in in_batch or (previous is not None and previous[-1] == run_id):
            line = in_batch.get(sku)
            where = f"line {line}" if line else "an earlier line"
            counts.reject(record.line, sku, f"duplicate sku: already on {where} of this feed")
            continue
        in_batch[sku] = record.line
        if previous is None:
            counts.created += 1
        elif previous[:-1] == (*(values[name] for name in CONTENT_FIELDS), True):
            counts.unchanged += 1
        else:
            counts.updated += 1
        listings.append(
            Listing(
                seller_id=seller_id,
                active=True,
                last_run_id=run_id,
                created_at=now,
                updated_at=now,
                **values,
            )
        )
    if listings:
        Listing.objects.bulk_create(
            listings,
            update_conflicts=True,
            unique_fields=["seller", "sku"],
            update_fields=list(UPDATE_FIELDS),
        )
        rejected_skus_clear(seller_id=seller_id, skus=(listing.sku for listing in listings))


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
