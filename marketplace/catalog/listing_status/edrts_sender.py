"""Sending listing statuses to the seller's platform database through EDRTS.

The outbox (``StatusChange``, written by database triggers: ``status_outbox.py``) is
drained per seller: the seller's ``StatusSync`` is the row of the EDRTS kind of the outbox
engine (``marketplace.outbox``), claimed with a lease (one drain per seller at a time),
its answers recorded while the claim holds, with the engine's embargo, backoff, dead
letter, sweeper and staff retry:

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
* other failures back off (the engine's one formula, from ``EDRTS_BACKOFF_BASE``) and are
  bounded (``EDRTS_MAX_FAILURES``); the last error stays on the seller's ``StatusSync``
  for the staff page, and staff start it again.

A ``success`` answer means "accepted": what a lost batch leaves wrong, the daily join
import repairs (reconciliation).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, cast

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from marketplace.catalog import dispatch
from marketplace.catalog.api_access.api_user import platform_api
from marketplace.catalog.errors import ApiAccessNeeded, CatalogError
from marketplace.catalog.listing_status import join_import
from marketplace.catalog.listing_status.status_file import (
    DEFAULT_TARGETS,
    LIVE,
    REJECTED,
    listing_url,
)
from marketplace.catalog.listing_status.status_outbox import (
    PRODUCT_ID_FIELD,
    edrts_on,
    edrts_sends,
    product_id_field,
    status_changes_record,
    status_changes_record_all,
    status_import_ran,
)
from marketplace.catalog.models import (
    CatalogSource,
    StatusChange,
    StatusImport,
    StatusSent,
    StatusSync,
)
from marketplace.outbox.claim import claim, holding, release
from marketplace.outbox.drain import cycle
from marketplace.outbox.kind import Answer, Claim, Journal, OutboxKind, Tuning
from marketplace.outbox.outcomes import OK, RATE_LIMITED, TRANSIENT, WAITING, Outcome
from marketplace.outbox.sweep import due_again, overdue_wake
from marketplace.platform.edrts import GROUP as EDRTS_GROUP
from marketplace.platform.embargo import embargo_remaining
from marketplace.platform.errors import PlatformError, PlatformRateLimited

__all__ = ["PRODUCT_ID_FIELD", "edrts_on", "edrts_sends", "product_id_field", "status_import_ran"]

logger = logging.getLogger(__name__)

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
# After the API user's sign-in is lost: look again this long after (the sign-in wakes
# the waiting senders at once: access.access_sign_in_finish).
ACCESS_WAIT_SECONDS = 60.0


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


def _unsent_exists(seller_id: int) -> bool:
    return StatusChange.objects.filter(seller_id=seller_id, sent_at__isnull=True).exists()


class EdrtsSendKind(OutboxKind):
    """A seller's EDRTS sender: one row per seller (``StatusSync``), whose "call" is a drain
    of the seller's waiting changes (several requests). No status field: a dead letter is
    ``EDRTS_MAX_FAILURES`` failures in a row; backing off is a ``next_attempt_at`` ahead."""

    name = "EDRTS send"
    model = StatusSync
    fields: ClassVar[list[str]] = ["last_error_at", "waiting_for_access"]
    # X-Rate-Limit-Reset says when the window ends, often within the second.
    embargo_min_seconds = 0.05
    wake_early = False  # a sender backing off has its countdown queued already
    due_time_required = False  # next_attempt_at is set only while backing off
    tuning = Tuning.named("EDRTS")

    def batch_size(self) -> int:
        return 1  # a drain is named by its seller

    def call_budget_seconds(self) -> float:
        # A drain stops starting requests after EDRTS_DRAIN_SECONDS; one more may run.
        request = settings.PLATFORM_CONNECT_TIMEOUT + settings.PLATFORM_READ_TIMEOUT
        return float(settings.EDRTS_DRAIN_SECONDS) + settings.EDRTS_HOLD_MAX_WAIT + request

    def open(self) -> Q:
        unsent = StatusChange.objects.filter(seller_id=OuterRef("seller_id"), sent_at__isnull=True)
        return Q(Exists(unsent))

    def late(self, now: datetime) -> Q:
        backing_off = Q(next_attempt_at__gt=now)
        return self.open() & ~backing_off & Q(failures__lt=self.max_failures())

    def dead(self) -> Q:
        # A sender staff turned off waits for nobody: its statuses are settled as "off".
        return Q(failures__gte=self.max_failures(), edrts_enabled=True)

    def is_dead(self, row: Any) -> bool:
        return bool(row.failures >= self.max_failures())

    def status_of(self, row: Any) -> str:
        return "failed" if self.is_dead(row) else "waiting" if row.next_attempt_at else "ok"

    def key_field(self) -> str:
        return "seller_id"

    def key_of(self, row: Any) -> int:
        return int(row.seller_id)

    def due_again_fields(self, now: datetime) -> dict[str, Any]:
        return {"failures": 0, "attempts": 0, "next_attempt_at": None, "updated_at": now}

    def prepare(
        self, rows: list[Any], token: str, now: datetime, journal: Journal
    ) -> tuple[list[Claim], dict[int, str]]:
        claims = [Claim(r.pk, r.seller_id, r.seller_id, token, 0, DrainResult()) for r in rows]
        return claims, {}

    def send_one(self, client: Any, claim: Claim) -> Outcome:
        return _drain(claim, cast(DrainResult, claim.data))

    def done(self, row: Any, answer: Answer) -> None:
        # The requests' progress was recorded as they went (_sent); a note for the page
        # (waiting for the import, not addressable) is kept until something is sent.
        note = answer.outcome.message
        if note and row.last_error != note:
            row.last_error = note
            row.last_error_at = answer.now

    def retrying(self, row: Any, answer: Answer, delay: float, counts: bool) -> None:
        row.last_error_at = answer.now
        _told(answer, again_in=delay, error=answer.outcome.message)

    def dead_letter(self, row: Any, answer: Answer) -> None:
        row.next_attempt_at = None
        row.last_error = (
            f"{answer.outcome.message} "
            f"(after {row.failures} failed attempts the sender waits for staff)"
        )
        row.last_error_at = answer.now
        _told(answer, again_in=None, error=row.last_error)

    def waiting(self, row: Any, answer: Answer) -> None:
        # Back once staff sign in again: the sign-in wakes every sender waiting so
        # (access.access_sign_in_finish); the countdown is only the fallback.
        row.waiting_for_access = True
        row.last_error = answer.outcome.message
        row.last_error_at = answer.now
        row.next_attempt_at = answer.now + timedelta(seconds=ACCESS_WAIT_SECONDS)
        _told(answer, again_in=ACCESS_WAIT_SECONDS, error=answer.outcome.message)
        self.wake(row.seller_id, countdown=ACCESS_WAIT_SECONDS)

    def wake(self, key: int, countdown: float | None = None) -> None:
        dispatch.status_sync_drain_enqueue(key, countdown=countdown or 0.0)

    def sweep_wake(self, keys: list[int]) -> None:
        for seller_id in sorted(keys):
            dispatch.status_sync_drain_enqueue(seller_id)


EDRTS_SEND = EdrtsSendKind()


def _told(answer: Answer, *, again_in: float | None, error: str) -> None:
    """What the drain's caller learns of a failure: when to come back, and why."""
    if answer.claim is not None:
        result = cast(DrainResult, answer.claim.data)
        result.again_in = again_in
        result.error = error


def status_sync_drain(*, seller_id: int, force: bool = False) -> DrainResult:
    """Send the seller's waiting status changes (one drain per seller at a time) and queue
    the next drain when one is due. ``force``: even while backing off or stopped after
    too many failures (staff's "Retry now")."""
    status_sync_of(seller_id=seller_id)
    batch = claim(EDRTS_SEND, keys=[seller_id], force=force, wait=False)
    if not batch.claims:
        # Locked by another transaction, or leased to another drain: busy. Backing off
        # or stopped: held (its countdown, the sweep or staff come back).
        reason = batch.reasons.get(seller_id, "claimed")
        return DrainResult(busy=reason == "claimed", held=reason != "claimed")
    try:
        _, outcomes = cycle(EDRTS_SEND, batch)
    except BaseException:
        logger.exception("status sync of seller %s: the drain crashed", seller_id)
        release(EDRTS_SEND, batch)
        raise
    result = cast(DrainResult, batch.claims[0].data)
    if outcomes[seller_id].kind == OK:
        if result.again_in is not None:
            dispatch.status_sync_drain_enqueue(seller_id, countdown=result.again_in)
        elif not result.held and _unsent_exists(seller_id):
            # Changes committed while the lease was held (their wake-up found it busy).
            dispatch.status_sync_drain_enqueue(seller_id)
    return result


def _drain(claim: Claim, result: DrainResult) -> Outcome:
    """The seller's waiting changes sent, a request at a time, within the drain's time."""
    seller_id = claim.key
    source = CatalogSource.objects.filter(seller_id=seller_id).first()
    enabled = edrts_on(seller_id=seller_id)
    if not enabled or source is None or not source.db_id:
        # Off (or no database): the import alone keeps the seller's rows up to date.
        result.skipped = _settle_all_unsent(seller_id, StatusChange.Outcome.OFF)
        return Outcome(OK, detail=result)
    field = product_id_field(source)
    if field != PRODUCT_ID_FIELD:
        result.skipped = _settle_all_unsent(seller_id, StatusChange.Outcome.OFF)
        return Outcome(OK, NOT_ADDRESSABLE.format(field=field or "(none)"), detail=result)
    if not status_import_ran(source=source):
        # Held, not settled: the import's first run (status_import_status_refresh) wakes it.
        result.held = True
        return Outcome(OK, WAITING_FOR_IMPORT, detail=result)
    targets = status_targets(source=source)
    deadline = time.monotonic() + settings.EDRTS_DRAIN_SECONDS
    while time.monotonic() < deadline:
        outcome = _step(claim, source, targets, result)
        if outcome is not None:
            return outcome
        if result.requests >= settings.EDRTS_REQUESTS_PER_DRAIN:
            break  # the worker's turn goes to the next seller; this one is queued again
    result.again_in = 0.0  # handed over: more may wait
    return Outcome(OK, detail=result)


@dataclass
class _Waiting:
    """A seller's sendable changes: each SKU's newest, oldest first."""

    sendable: list[dict[str, Any]]
    ids_of: dict[str, list[int]]
    first_seen: dict[str, datetime]
    # The scan reached the end of what waits (fewer rows than EDRTS_SCAN_ROWS).
    complete: bool


def _waiting(seller_id: int, result: DrainResult) -> _Waiting | None:
    """Read what waits (EDRTS_SCAN_ROWS rows), coalesced per SKU; settle what must not be
    sent (older than what was sent, or no longer in the seller's database). None when
    nothing waits."""
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
        return None
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
    sendable.sort(key=lambda row: first_seen[row["sku"]])
    return _Waiting(sendable, ids_of, first_seen, complete=len(pending) < scan)


def _step(
    claim: Claim, source: CatalogSource, targets: dict[str, str], result: DrainResult
) -> Outcome | None:
    """One request's worth; returns the drain's outcome when it should stop."""
    seller_id = claim.key
    waiting = _waiting(seller_id, result)
    if waiting is None:
        return Outcome(OK, detail=result)
    if not waiting.sendable:
        return None
    if len(waiting.sendable) < settings.EDRTS_BATCH_MIN and waiting.complete:
        oldest = min(waiting.first_seen[row["sku"]] for row in waiting.sendable)
        age = (timezone.now() - oldest).total_seconds()
        if age < settings.EDRTS_LINGER_SECONDS:
            result.again_in = settings.EDRTS_LINGER_SECONDS - age
            return Outcome(OK, detail=result)
    try:
        with platform_api(hold_wait=settings.EDRTS_HOLD_MAX_WAIT, seller_id=seller_id) as api:
            # The request's turn first, its records after: while the budget is the limit
            # (sellers' drains queue for turns), what arrived during the wait fills the
            # request. Only this drain sends the seller's changes (the claim), so a second
            # read finds what the first did and more.
            waited = api.edrts.turn_take()
            if waited > 0 and len(waiting.sendable) < settings.EDRTS_BATCH_MAX:
                again = _waiting(seller_id, result)
                if again is not None and again.sendable:
                    waiting = again
            batch = waiting.sendable[: settings.EDRTS_BATCH_MAX]
            records = [status_record(row, targets=targets) for row in batch]
            api.edrts.put_records(db_id=source.db_id, records=records)
    except PlatformRateLimited as exc:
        # The embargo holds every worker's EDRTS calls; come back when it ends.
        wait = exc.retry_after or settings.PUSH_RATE_LIMIT_DEFAULT_WAIT
        result.again_in = max(EDRTS_SEND.embargo_min_seconds, float(wait))
        return Outcome(RATE_LIMITED, exc.message, exc.status, result.again_in, detail=result)
    except ApiAccessNeeded as exc:
        return Outcome(WAITING, str(exc), detail=result)
    except (PlatformError, ValueError) as exc:
        status = exc.status if isinstance(exc, PlatformError) else None
        return Outcome(TRANSIENT, f"Sending statuses failed: {exc}", status, detail=result)
    if not _sent(claim, batch, waiting.ids_of):
        return Outcome(OK, detail=result)  # our lease was taken over: stop here
    result.requests += 1
    result.records += len(batch)
    return None


def _sent(claim: Claim, batch: list[dict[str, Any]], ids_of: dict[str, list[int]]) -> bool:
    """Record a request's success while the claim holds; False when it no longer does."""
    now = timezone.now()
    sent_ids = [row["id"] for row in batch]
    superseded = [i for row in batch for i in ids_of[row["sku"]] if i != row["id"]]
    with holding(EDRTS_SEND, pk=claim.pk, token=claim.token) as sync:
        if sync is None:
            return False
        _settle(sent_ids, StatusChange.Outcome.SENT, now)
        _settle(superseded, StatusChange.Outcome.SUPERSEDED, now)
        # One drain per seller (the claim) and versions only grow: a plain upsert.
        StatusSent.objects.bulk_create(
            [
                StatusSent(
                    seller_id=claim.key,
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
            last_error_status=None,
            last_sent_at=now,
            updated_at=now,
        )
    return True


# --- the sweep and staff actions ------------------------------------------------------------


def status_sync_sweep() -> int:
    """Wake every seller whose changes wait and who is not backing off, stopped or being
    drained (a lost wake-up, a countdown lost with the broker). Returns how many."""
    waiting = set(
        StatusChange.objects.filter(sent_at__isnull=True)
        .values_list("seller_id", flat=True)
        .distinct()
    )
    if not waiting:
        return 0
    known = set(
        StatusSync.objects.filter(seller_id__in=waiting).values_list("seller_id", flat=True)
    )
    # A seller whose first wake-up was lost has no sender row yet: the sweep finds rows.
    StatusSync.objects.bulk_create(
        [StatusSync(seller_id=seller_id) for seller_id in sorted(waiting - known)],
        ignore_conflicts=True,
    )
    return overdue_wake(EDRTS_SEND, limit=len(waiting))


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
    recorded = status_changes_record_all(seller_id=seller_id)
    status_sync_retry(seller_id=seller_id)
    return recorded


def status_sync_send_again(*, seller_id: int, skus: list[str]) -> int:
    """The reconciliation: the platform holds another status of ``skus`` than the one we
    sent; record each one's current status as a change (newer than what was sent, so the
    sender sends it) and wake the sender once this commits. Returns how many recorded."""
    recorded = status_changes_record(seller_id=seller_id, skus=skus)
    if recorded:
        status_sync_of(seller_id=seller_id)
        status_sync_kick(seller_id=seller_id)
    return recorded


def status_sync_retry(*, seller_id: int) -> StatusSync:
    """Staff: forget the failures and the backoff, and drain now."""
    status_sync_of(seller_id=seller_id)
    due_again(EDRTS_SEND, StatusSync.objects.filter(seller_id=seller_id))
    status_sync_kick(seller_id=seller_id)
    return StatusSync.objects.get(seller_id=seller_id)


def status_sync_enable(*, seller_id: int, enabled: bool) -> str:
    """Staff turn EDRTS on or off for the seller. On: every current status is sent again
    (what changed while it was off). The listing-status import's schedule follows
    (``join_import.status_import_schedule_follow``): daily with EDRTS, hourly without.
    Returns why the import could not be rescheduled ("" when it was, or there is none):
    the switch stands either way."""
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


def embargo_left(*, api_user: str) -> float:
    """Seconds the platform still holds the API user's EDRTS calls (for the page)."""
    return embargo_remaining(holder=f"api-user:{api_user}:{EDRTS_GROUP}")
