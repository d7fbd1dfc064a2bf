"""Sending listing statuses to the seller's platform database through EDRTS.

The outbox (``StatusChange``, written by database triggers: ``status_outbox.py``) is
drained per seller, one drain at a time (a lease on the seller's ``StatusSync``):

* several changes of one SKU are coalesced into its latest, and a change no newer than
  the version already sent for that SKU (``StatusSent``) is never sent;
* nothing is sent before the seller's listing-status import has run once at the platform
  (``status_import_ran``): the import creates the ``mp_*`` fields in the seller's
  database, and EDRTS only writes fields it already fills (edrts-contract.md). Until then
  the changes wait (the page says why); the status sweep that sees the first run wakes the
  sender and puts the import on its daily schedule;
* the record's ``id`` is the seller's own id exactly as their database holds it (the
  feed's raw value, ``Listing.record_id``): a trimmed one names another record;
* only SKUs the seller's database holds are sent: a ``PUT /db`` with an unknown id would
  create a stray product. The feed is the seller's database exported, so a SKU it carries
  exists: listed SKUs (``live``) and SKUs carried but rejected (``rejected``). A listing is
  deactivated only when a full feed no longer carries it (the product left the database),
  and a rejection is forgotten when the SKU left the feed: those changes are settled as
  ``skipped``. The record's ``id`` is the SKU, so the feed's SKU must come from the
  database's product id (``id``); a seller whose SKU comes from another field is not sent
  at all (the page says why; the import alone keeps them up to date);
* 50 to 150 records a request (fewer only when the oldest waiting change is
  ``EDRTS_LINGER_SECONDS`` old), under a budget shared by every worker, and a 429's
  ``X-Rate-Limit-Reset`` (or ``Retry-After``) holds every worker's EDRTS calls for that
  API user (``transport`` / ``embargo``): the drain hands over with a countdown, losing
  nothing;
* other failures back off and are bounded (``EDRTS_MAX_FAILURES``); the last error stays
  on the seller's ``StatusSync`` for the staff page, and staff start it again.

A ``success`` answer means "accepted": what a lost batch leaves wrong, the daily join
import repairs (reconciliation).
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from marketplace.catalog import dispatch
from marketplace.catalog.api_access.api_user import platform_api
from marketplace.catalog.errors import ApiAccessNeeded
from marketplace.catalog.listing_status.status_file import (
    DEFAULT_TARGETS,
    LIVE,
    REJECTED,
    listing_url,
)
from marketplace.catalog.models import (
    CatalogSource,
    StatusChange,
    StatusImport,
    StatusSent,
    StatusSync,
)
from marketplace.platform.embargo import embargo_remaining
from marketplace.platform.errors import PlatformError, PlatformRateLimited

logger = logging.getLogger(__name__)

# The product id field of a platform database: what an EDRTS record's ``id`` names.
PRODUCT_ID_FIELD = "id"
# Statuses of SKUs the seller's database holds (see the module docstring).
SENDABLE = frozenset({LIVE, REJECTED})
WAITING_FOR_IMPORT = (
    "Waiting for the listing-status import's first run: EDRTS writes only the mp_* fields "
    "that import creates in the seller's database."
)
NOT_ADDRESSABLE = (
    "The feed's SKU comes from the field “{field}”, not the product id: EDRTS cannot "
    "address the products; the listing-status import alone brings statuses back."
)


@dataclass
class DrainResult:
    requests: int = 0
    records: int = 0
    skipped: int = 0
    busy: bool = False
    # Backing off, or stopped until staff retry: nothing is queued until then.
    held: bool = False
    # Seconds until the drain should run again (a linger, a 429, a backoff), or None.
    again_in: float | None = None
    error: str = ""


def status_sync_of(*, seller_id: int) -> StatusSync:
    sync, _ = StatusSync.objects.get_or_create(seller_id=seller_id)
    return sync


def product_id_field(source: CatalogSource) -> str:
    """The seller's field that feeds the SKU (the import's join key): "" when none."""
    for column, field in source.export_fields or []:
        if column == "sku" and field:
            return str(field)
    return PRODUCT_ID_FIELD if not source.export_fields else ""


def status_import_ran(*, source: CatalogSource) -> bool:
    """Whether the seller's listing-status import is set up and has run at the platform at
    least once (it created the ``mp_*`` fields EDRTS writes)."""
    status_import = StatusImport.objects.filter(source=source).first()
    return (
        status_import is not None
        and status_import.is_active
        and bool(status_import.last_download_time)
    )


def status_targets(*, source: CatalogSource) -> dict[str, str]:
    """The seller's fields the statuses fill: the listing-status import's (staff may have
    changed them), so EDRTS and the import write the same fields."""
    status_import = StatusImport.objects.filter(source=source).first()
    targets = dict(DEFAULT_TARGETS)
    if status_import is not None and status_import.targets:
        targets.update({k: str(v) for k, v in status_import.targets.items() if k in targets})
    return targets


def _iso(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else ""


def status_record(row: dict[str, Any], *, targets: dict[str, str]) -> dict[str, str]:
    """One EDRTS record: the product's id and the ``mp_*`` fields only, with the values the
    listing-status file gives (status_file.status_rows)."""
    listing_id = row["listing_id"]
    return {
        # The seller's own id as their database holds it: a trimmed one names another record,
        # and EDRTS creates a product for an unknown id.
        "id": row["record_id"] or row["sku"],
        targets["listing_id"]: str(listing_id) if listing_id else "",
        targets["status"]: row["status"],
        targets["reason"]: row["reason"],
        targets["listing_url"]: listing_url(listing_id) if listing_id else "",
        targets["updated_at"]: _iso(row["status_at"]),
    }


def _settle(ids: list[int], outcome: str, now: datetime) -> None:
    if ids:
        StatusChange.objects.filter(pk__in=ids, sent_at__isnull=True).update(
            sent_at=now, outcome=outcome
        )


def _settle_all_unsent(seller_id: int, outcome: str) -> int:
    return StatusChange.objects.filter(seller_id=seller_id, sent_at__isnull=True).update(
        sent_at=timezone.now(), outcome=outcome
    )


def _lease_take(seller_id: int) -> bool:
    status_sync_of(seller_id=seller_id)
    now = timezone.now()
    return bool(
        StatusSync.objects.filter(seller_id=seller_id)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(lease_until=now + timedelta(seconds=settings.EDRTS_LEASE_SECONDS))
    )


def _lease_release(seller_id: int) -> None:
    StatusSync.objects.filter(seller_id=seller_id).update(lease_until=None)


def _unsent_exists(seller_id: int) -> bool:
    return StatusChange.objects.filter(seller_id=seller_id, sent_at__isnull=True).exists()


def status_sync_drain(*, seller_id: int, force: bool = False) -> DrainResult:
    """Send the seller's waiting status changes (one drain per seller at a time) and queue
    the next drain when one is due. ``force``: even while backing off or stopped after
    too many failures (staff's "Retry now")."""
    if not _lease_take(seller_id):
        return DrainResult(busy=True)
    try:
        result = _drain(seller_id, force=force)
    except Exception:
        logger.exception("status sync of seller %s: the drain crashed", seller_id)
        raise
    finally:
        _lease_release(seller_id)
    if result.again_in is not None:
        dispatch.status_sync_drain_enqueue(seller_id, countdown=result.again_in)
    elif not result.error and not result.held and _unsent_exists(seller_id):
        # Changes committed while the lease was held (their wake-up found it busy).
        dispatch.status_sync_drain_enqueue(seller_id)
    return result


def _failure(sync: StatusSync, message: str, *, count: bool = True) -> DrainResult:
    now = timezone.now()
    if count:
        sync.failures += 1
    failures = sync.failures
    again_in: float | None = None
    if not count:
        again_in = 60.0
    elif failures < settings.EDRTS_MAX_FAILURES:
        backoff = min(settings.EDRTS_BACKOFF_CAP, settings.EDRTS_BACKOFF_BASE * 2 ** (failures - 1))
        again_in = backoff * random.uniform(0.8, 1.2)
    else:
        message += f" (after {failures} failed attempts the sender waits for staff)"
    StatusSync.objects.filter(pk=sync.pk).update(
        failures=sync.failures,
        next_attempt_at=now + timedelta(seconds=again_in) if again_in is not None else None,
        last_error=message[:500],
        last_error_at=now,
        updated_at=now,
    )
    return DrainResult(again_in=again_in, error=message)


def _drain(seller_id: int, *, force: bool) -> DrainResult:
    sync = StatusSync.objects.get(seller_id=seller_id)
    result = DrainResult()
    now = timezone.now()
    if not force:
        if sync.failures >= settings.EDRTS_MAX_FAILURES:
            result.held = True  # waits for staff
            return result
        if sync.next_attempt_at and sync.next_attempt_at > now:
            result.held = True  # its own countdown (or the sweep) comes back then
            return result
    source = CatalogSource.objects.filter(seller_id=seller_id).first()
    if not sync.edrts_enabled or source is None or not source.db_id:
        # Off (or no database): the import alone keeps the seller's rows up to date.
        result.skipped = _settle_all_unsent(seller_id, StatusChange.Outcome.OFF)
        return result
    field = product_id_field(source)
    if field != PRODUCT_ID_FIELD:
        result.skipped = _settle_all_unsent(seller_id, StatusChange.Outcome.OFF)
        message = NOT_ADDRESSABLE.format(field=field or "(none)")
        if sync.last_error != message:
            StatusSync.objects.filter(pk=sync.pk).update(
                last_error=message, last_error_at=timezone.now()
            )
        return result
    if not status_import_ran(source=source):
        # Held, not settled: the import's first run (status_import_status_refresh) wakes it.
        result.held = True
        if sync.last_error != WAITING_FOR_IMPORT:
            StatusSync.objects.filter(pk=sync.pk).update(
                last_error=WAITING_FOR_IMPORT, last_error_at=timezone.now()
            )
        return result
    targets = status_targets(source=source)
    deadline = time.monotonic() + settings.EDRTS_DRAIN_SECONDS
    while time.monotonic() < deadline:
        step = _step(sync, source, targets, result)
        if step is not None:
            return step
        if result.requests >= settings.EDRTS_REQUESTS_PER_DRAIN:
            break  # the worker's turn goes to the next seller; this one is queued again
    result.again_in = 0.0  # handed over: more may wait
    return result


def _step(
    sync: StatusSync, source: CatalogSource, targets: dict[str, str], result: DrainResult
) -> DrainResult | None:
    """One request's worth; returns the drain's result when it should stop."""
    seller_id = sync.seller_id
    scan = settings.EDRTS_SCAN_ROWS
    pending: list[dict[str, Any]] = [
        dict(row)
        for row in StatusChange.objects.filter(seller_id=seller_id, sent_at__isnull=True)
        .order_by("id")
        .values(
            "id", "sku", "record_id", "listing_id", "status", "reason", "status_at", "created_at"
        )[:scan]
    ]
    if not pending:
        return result
    latest: dict[str, dict[str, Any]] = {}
    first_seen: dict[str, datetime] = {}
    ids_of: dict[str, list[int]] = {}
    for row in pending:  # ordered by id: the last row of a SKU is its newest status
        latest[row["sku"]] = row
        first_seen.setdefault(row["sku"], row["created_at"])
        ids_of.setdefault(row["sku"], []).append(row["id"])
    sent = dict(
        StatusSent.objects.filter(seller_id=seller_id, sku__in=list(latest)).values_list(
            "sku", "version"
        )
    )
    now = timezone.now()
    older: list[int] = []
    unknown: list[int] = []
    sendable: list[dict[str, Any]] = []
    for sku, row in latest.items():
        if row["id"] <= sent.get(sku, 0):
            older += ids_of[sku]  # never send a status older than one already sent
        elif row["status"] not in SENDABLE:
            unknown += ids_of[sku]  # not (any more) in the seller's database
        else:
            sendable.append(row)
    _settle(older, StatusChange.Outcome.SUPERSEDED, now)
    _settle(unknown, StatusChange.Outcome.SKIPPED, now)
    result.skipped += len(unknown)
    if not sendable:
        return None
    sendable.sort(key=lambda row: first_seen[row["sku"]])
    if len(sendable) < settings.EDRTS_BATCH_MIN and len(pending) < scan:
        age = (now - min(first_seen[row["sku"]] for row in sendable)).total_seconds()
        if age < settings.EDRTS_LINGER_SECONDS:
            result.again_in = settings.EDRTS_LINGER_SECONDS - age
            return result
    batch = sendable[: settings.EDRTS_BATCH_MAX]
    records = [status_record(row, targets=targets) for row in batch]
    try:
        with platform_api(hold_wait=settings.EDRTS_HOLD_MAX_WAIT, seller_id=seller_id) as api:
            api.edrts.put_records(db_id=source.db_id, records=records)
    except PlatformRateLimited as exc:
        # The embargo holds every worker's EDRTS calls; come back when it ends.
        wait = exc.retry_after or settings.PUSH_RATE_LIMIT_DEFAULT_WAIT
        result.again_in = max(0.05, float(wait))
        return result
    except ApiAccessNeeded as exc:
        # Back once staff sign in again: the sign-in wakes every sender waiting so
        # (access.access_sign_in_finish); the countdown is only the fallback.
        StatusSync.objects.filter(pk=sync.pk).update(waiting_for_access=True)
        return _failure(sync, str(exc), count=False)
    except (PlatformError, ValueError) as exc:
        return _failure(sync, f"Sending statuses failed: {exc}")
    _sent(seller_id, batch, ids_of, sync)
    result.requests += 1
    result.records += len(batch)
    return None


def _sent(
    seller_id: int, batch: list[dict[str, Any]], ids_of: dict[str, list[int]], sync: StatusSync
) -> None:
    now = timezone.now()
    sent_ids = [row["id"] for row in batch]
    superseded = [i for row in batch for i in ids_of[row["sku"]] if i != row["id"]]
    with transaction.atomic():
        _settle(sent_ids, StatusChange.Outcome.SENT, now)
        _settle(superseded, StatusChange.Outcome.SUPERSEDED, now)
        # One drain per seller (the lease) and versions only grow: a plain upsert.
        StatusSent.objects.bulk_create(
            [
                StatusSent(
                    seller_id=seller_id,
                    sku=row["sku"],
                    version=row["id"],
                    status=row["status"],
                    sent_at=now,
                )
                for row in batch
            ],
            update_conflicts=True,
            unique_fields=["seller", "sku"],
            update_fields=["version", "status", "sent_at"],
        )
        StatusSync.objects.filter(pk=sync.pk).update(
            failures=0,
            next_attempt_at=None,
            waiting_for_access=False,
            last_error="",
            last_sent_at=now,
            updated_at=now,
        )
    sync.failures = 0


# --- the sweep and staff actions ------------------------------------------------------------


def status_sync_sweep() -> int:
    """Wake every seller whose changes wait and who is not backing off, stopped or being
    drained (a lost wake-up, a countdown lost with the broker). Returns how many."""
    now = timezone.now()
    waiting = set(
        StatusChange.objects.filter(sent_at__isnull=True)
        .values_list("seller_id", flat=True)
        .distinct()
    )
    if not waiting:
        return 0
    held = set(
        StatusSync.objects.filter(seller_id__in=waiting)
        .filter(
            Q(failures__gte=settings.EDRTS_MAX_FAILURES)
            | Q(next_attempt_at__gt=now)
            | Q(lease_until__gt=now)
        )
        .values_list("seller_id", flat=True)
    )
    due = sorted(waiting - held)
    for seller_id in due:
        dispatch.status_sync_drain_enqueue(seller_id)
    return len(due)


def status_changes_prune() -> int:
    """Delete settled outbox rows older than EDRTS_KEEP_SENT_DAYS (bounded batches)."""
    cutoff = timezone.now() - timedelta(days=settings.EDRTS_KEEP_SENT_DAYS)
    total = 0
    while True:
        ids = list(
            StatusChange.objects.filter(sent_at__lt=cutoff).values_list("pk", flat=True)[:5000]
        )
        if not ids:
            return total
        total += StatusChange.objects.filter(pk__in=ids).delete()[0]


def status_sync_kick(*, seller_id: int) -> None:
    """Wake the seller's sender once the current transaction commits (after a change)."""
    dispatch.status_sync_drain_enqueue(seller_id)


def status_sync_resend_all(*, seller_id: int) -> int:
    """Staff: record every current status as a change and start the sender (its failures
    forgiven). Returns how many were recorded."""
    from marketplace.catalog.status_outbox import status_changes_record_all

    recorded = status_changes_record_all(seller_id=seller_id)
    status_sync_retry(seller_id=seller_id)
    return recorded


def status_sync_retry(*, seller_id: int) -> StatusSync:
    """Staff: forget the failures and the backoff, and drain now."""
    status_sync_of(seller_id=seller_id)
    StatusSync.objects.filter(seller_id=seller_id).update(failures=0, next_attempt_at=None)
    status_sync_kick(seller_id=seller_id)
    return StatusSync.objects.get(seller_id=seller_id)


def status_sync_enable(*, seller_id: int, enabled: bool) -> str:
    """Staff turn EDRTS on or off for the seller. On: every current status is sent again
    (what changed while it was off). The listing-status import's schedule follows
    (``join_import.status_import_schedule_follow``): daily with EDRTS, hourly without.
    Returns why the import could not be rescheduled ("" when it was, or there is none):
    the switch stands either way."""
    from marketplace.catalog.errors import CatalogError
    from marketplace.catalog.listing_status import join_import

    status_sync_of(seller_id=seller_id)
    StatusSync.objects.filter(seller_id=seller_id).update(edrts_enabled=enabled)
    if enabled:
        status_sync_resend_all(seller_id=seller_id)
    else:
        status_sync_kick(seller_id=seller_id)  # settles what waits as "off"
    source = CatalogSource.objects.filter(seller_id=seller_id).first()
    if source is None:
        return ""
    try:
        join_import.status_import_schedule_follow(source=source)
    except CatalogError as exc:
        return str(exc)
    return ""


def edrts_on(*, seller_id: int) -> bool:
    enabled = (
        StatusSync.objects.filter(seller_id=seller_id)
        .values_list("edrts_enabled", flat=True)
        .first()
    )
    return True if enabled is None else bool(enabled)


def edrts_sends(*, source: CatalogSource) -> bool:
    """Whether EDRTS sends this seller's statuses: on, and the SKU is the product id."""
    return edrts_on(seller_id=source.seller_id) and product_id_field(source) == PRODUCT_ID_FIELD


def embargo_left(*, api_user: str) -> float:
    """Seconds the platform still holds the API user's EDRTS calls (for the page)."""
    from marketplace.platform.edrts import GROUP

    return embargo_remaining(holder=f"api-user:{api_user}:{GROUP}")
