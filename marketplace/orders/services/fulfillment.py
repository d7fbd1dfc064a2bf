"""What the seller sent back: store it, validate it, report problems, settle the order.

``order_fulfillment_apply`` stores one order's fulfillment as pulled (replacing what was
there: re-reading is idempotent), records validation problems by fingerprint and
resolves the ones that disappeared. The platform's answer is the current truth: a
package the seller corrected there replaces the stored shipment, one the seller deleted
is gone (the stored event names both), and a problem only that package caused is
resolved; its report (sent once) is never sent again. ``order_problems_report`` tells the
platform about problems not reported yet (each once). ``order_settle`` moves a fully shipped or
cancelled order without open problems to SHIPPED (or CANCELLED) and queues that push.

``order_fulfillment_pull`` is the pull's per-order step: apply and settle in one
transaction, settling from what it has just stored instead of reading it back (the pull
does this for every shipped order, so its queries are what a pull costs). It tells the
pull whether a report is worth trying, so an order without problems skips that query.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from marketplace.orders.models import (
    LineCancellation,
    MarketplaceState,
    Order,
    OrderLine,
    Shipment,
    SyncEvent,
    ValidationProblem,
)
from marketplace.orders.services.outbox import order_sync_mark_changed, sync_event_add
from marketplace.orders.states import transition_allowed
from marketplace.orders.validation import (
    Problem,
    ProblemCode,
    fulfillment_problems,
    parse_fulfillments,
)
from marketplace.platform.errors import PlatformError
from marketplace.platform.order_source import OrderSourceClient
from sellers.token_source import order_client_for_seller

if TYPE_CHECKING:
    from typing import TypedDict

    from django_stubs_ext import WithAnnotations

    class _ProblemsKnown(TypedDict):
        has_problems: bool

    # What ``_order_lock`` returns: the order, and whether it ever had a problem.
    LockedOrder = WithAnnotations[Order, _ProblemsKnown]

logger = logging.getLogger(__name__)

SETTLE_ACTOR = "settle"
SETTLEABLE_STATES = (MarketplaceState.PENDING, MarketplaceState.AWAITING_SHIPMENT)
# Saved on every read of a fulfillment, and in addition when its body changed.
_PULLED_FIELDS = ["platform_seller_updated_at", "fulfillment_pulled_at", "updated_at"]
_STORED_FIELDS = [*_PULLED_FIELDS, "fulfillment_status", "fulfillment_digest"]


@dataclass(frozen=True)
class LineTotal:
    """One order line against what the seller's fulfillment covers of it."""

    ordered: int
    shipped: int
    cancelled: int


@dataclass
class _Stored:
    """What storing a changed fulfillment wrote: enough to settle without reading it back."""

    lines: list[LineTotal]
    open_problems: bool
    unreported_problems: bool
    events: list[SyncEvent]


@dataclass(frozen=True)
class PullOutcome:
    """What ``order_fulfillment_pull`` did to one order."""

    changed: bool
    settled: str | None
    # Open problems may be unreported: only then is order_problems_report worth a query.
    report_due: bool


# What a digest covers of each line: the contract's fields that say what was shipped or
# cancelled. Fields the platform may add later (the contract asks us to tolerate them)
# and derived ones (status, pending) do not make an order look changed.
_SHIPMENT_KEYS = ("quantity", "carrier", "tracking_number", "shipped_date", "tracking_url")
_CANCELLATION_KEYS = ("quantity", "reason")


def _canonical(items: Any, keys: tuple[str, ...]) -> list[Any]:
    if not isinstance(items, list):
        return [repr(items)] if items is not None else []
    return [
        {key: item.get(key) for key in keys} if isinstance(item, dict) else repr(item)
        for item in items
    ]


def fulfillment_digest(body: dict[str, Any]) -> str:
    """A fingerprint of what the seller shipped and cancelled, equal whether the lines
    came from the order listing or from ``/fulfillments``."""
    lines = body.get("fulfillments")
    canonical = [
        {
            "mp_line_number": line.get("mp_line_number"),
            "shipments": _canonical(line.get("shipments"), _SHIPMENT_KEYS),
            "cancellations": _canonical(line.get("cancellations"), _CANCELLATION_KEYS),
        }
        if isinstance(line, dict)
        else repr(line)
        for line in (lines if isinstance(lines, list) else [lines])
    ]
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, default=str).encode()).hexdigest()


def _event(
    order: Order, kind: str, message: str, *, actor: str = "", detail: dict[str, Any] | None = None
) -> SyncEvent:
    """An unsaved event, as ``sync_event_add`` would write it (saved in one bulk insert)."""
    return SyncEvent(
        order_id=order.id, kind=kind, message=message[:2000], actor=actor[:150], detail=detail or {}
    )


def _order_lock(order_id: int) -> LockedOrder:
    """The order, locked, annotated with ``has_problems``.

    Nearly every order never had a problem; knowing that from the row we lock anyway
    saves reading its (empty) problems on every changed fulfillment.
    """
    return (
        Order.objects.select_for_update(no_key=True)
        .annotate(has_problems=Exists(ValidationProblem.objects.filter(order=OuterRef("pk"))))
        .get(pk=order_id)
    )


def _pulled_mark(order: Order, seller_updated_at: datetime | None, now: datetime) -> None:
    order.platform_seller_updated_at = seller_updated_at or order.platform_seller_updated_at
    order.fulfillment_pulled_at = now


def order_fulfillment_apply(
    *, order_id: int, body: dict[str, Any], seller_updated_at: datetime | None = None
) -> bool:
    """Store the pulled fulfillment of one order; returns True if anything changed."""
    now = timezone.now()
    digest = fulfillment_digest(body)
    with transaction.atomic():
        order = _order_lock(order_id)
        _pulled_mark(order, seller_updated_at, now)
        if order.fulfillment_digest == digest:
            order.save(update_fields=_PULLED_FIELDS)
            return False
        stored = _fulfillment_store(order, body, digest, now)
        order.save(update_fields=_STORED_FIELDS)
        SyncEvent.objects.bulk_create(stored.events)
    return True


def order_fulfillment_pull(
    *,
    order_id: int,
    body: dict[str, Any],
    seller_updated_at: datetime | None = None,
    listed_seller_updated_at: Any = None,
) -> PullOutcome:
    """Apply the pulled fulfillment and settle the order, in one transaction.

    The same rows and events as ``order_fulfillment_apply``, a PULLED event and then
    ``order_settle``; ``listed_seller_updated_at`` is the listing's value, as the PULLED
    event shows it. No HTTP here: the caller fetched the body and reports problems after.
    """
    now = timezone.now()
    digest = fulfillment_digest(body)
    with transaction.atomic():
        order = _order_lock(order_id)
        _pulled_mark(order, seller_updated_at, now)
        changed = order.fulfillment_digest != digest
        if changed:
            stored = _fulfillment_store(order, body, digest, now)
            events, fields = stored.events, list(_STORED_FIELDS)
            target = _settle_rule(
                order.state, open_problems=stored.open_problems, lines=stored.lines
            )
            report_due = stored.unreported_problems
        else:
            # Nothing new, but the order may have become settleable since (a state change
            # through intake, a problem resolved): settle as order_settle would.
            events, fields = [], list(_PULLED_FIELDS)
            target = _settle_target(order)
            report_due = order.has_problems  # a report that failed earlier is retried
        events.append(
            _event(
                order,
                SyncEvent.Kind.PULLED,
                "fulfillment changed" if changed else "fulfillment unchanged",
                detail={
                    "seller_updated_at": listed_seller_updated_at,
                    "status": body.get("status"),
                },
            )
        )
        settled = _settle_write(order, target, actor=SETTLE_ACTOR, fields=fields, events=events)
    return PullOutcome(changed=changed, settled=settled, report_due=report_due)


def _fulfillment_store(
    order: LockedOrder, body: dict[str, Any], digest: str, now: datetime
) -> _Stored:
    """Replace the order's shipments and cancellations by ``body``'s; record its problems.

    ``order`` comes from ``_order_lock``. Sets the order's fulfillment fields (the caller
    saves them, with its state if it settles) and returns the events to write, in the
    order people read them.
    """
    lines = {
        line.mp_line_number: line
        for line in OrderLine.objects.filter(order=order).annotate(
            # Only lines that carry rows need a DELETE (a first fulfillment carries none).
            has_shipments=Exists(Shipment.objects.filter(line=OuterRef("pk"))),
            has_cancellations=Exists(LineCancellation.objects.filter(line=OuterRef("pk"))),
        )
    }
    # The platform's fulfillment is the current truth: a package the seller corrected
    # replaces the stored one, one the seller deleted is gone. What disappears is named in
    # the event, so the order's history shows what the seller changed.
    before: Counter[tuple[str, str, str]] = Counter()
    if any(line.has_shipments for line in lines.values()):
        stored = Shipment.objects.filter(line__order=order)
        before.update(stored.values_list("line__mp_line_number", "carrier", "tracking_number"))
        stored.delete()
    if any(line.has_cancellations for line in lines.values()):
        LineCancellation.objects.filter(line__order=order).delete()
    parsed = parse_fulfillments(body)
    shipments, cancellations = [], []
    shipped: Counter[str] = Counter()
    cancelled: Counter[str] = Counter()
    for entry in parsed:
        line = lines.get(entry.mp_line_number)
        if line is None:
            continue  # reported as UNKNOWN_LINE below; nothing to attach it to
        shipments += [
            Shipment(
                line=line,
                quantity=s.quantity,
                carrier=s.carrier[:64],
                tracking_number=s.tracking_number[:128],
                tracking_url=s.tracking_url[:2000],
                shipped_date=s.shipped_date,
            )
            for s in entry.shipments
        ]
        cancellations += [
            LineCancellation(line=line, quantity=c.quantity, reason=c.reason[:64])
            for c in entry.cancellations
        ]
        shipped[entry.mp_line_number] += entry.shipped
        cancelled[entry.mp_line_number] += entry.cancelled
    if shipments:
        Shipment.objects.bulk_create(shipments)
    if cancellations:
        LineCancellation.objects.bulk_create(cancellations)
    order.fulfillment_status = str(body.get("status") or "")[:32]
    order.fulfillment_digest = digest
    gone = sorted(
        (
            before
            - Counter((s.line.mp_line_number, s.carrier, s.tracking_number) for s in shipments)
        ).elements()
    )
    stored_event = _event(
        order,
        SyncEvent.Kind.FULFILLMENT_STORED,
        f"{sum(s.quantity for s in shipments)} shipped in {len(shipments)} shipment(s), "
        f"{sum(c.quantity for c in cancellations)} cancelled; "
        f"platform status {order.fulfillment_status or 'unknown'}"
        + (
            "; no longer on the platform (corrected or deleted by the seller): "
            + ", ".join(f"line {line} {carrier} {number}" for line, carrier, number in gone)
            if gone
            else ""
        ),
        detail={
            "shipments_gone": [
                {"mp_line_number": line, "carrier": carrier, "tracking_number": number}
                for line, carrier, number in gone
            ]
        }
        if gone
        else None,
    )
    problems = fulfillment_problems(
        parsed,
        ordered={number: line.quantity for number, line in lines.items()},
        purchase_date=order.purchase_date,
        today=now.date(),
    )
    unreported, resolved_events = _problems_record(order, problems, now)
    return _Stored(
        lines=[
            LineTotal(line.quantity, shipped[number], cancelled[number])
            for number, line in lines.items()
        ],
        # Recording leaves exactly the problems found open (new, or back again).
        open_problems=bool(problems),
        unreported_problems=unreported,
        events=[stored_event, *resolved_events],
    )


def _problems_record(
    order: LockedOrder, problems: list[Problem], now: datetime
) -> tuple[bool, list[SyncEvent]]:
    """Upsert the found problems by fingerprint, resolve the vanished ones.

    ``order`` comes from ``_order_lock``. Returns whether an open problem is still
    unreported, and the PROBLEM_RESOLVED events.
    """
    if not problems and not order.has_problems:
        return False, []
    existing = {p.fingerprint: p for p in ValidationProblem.objects.filter(order=order)}
    found = {problem.fingerprint for problem in problems}
    created, touched, events = [], [], []
    for problem in problems:
        row = existing.get(problem.fingerprint)
        if row is None:
            created.append(
                ValidationProblem(
                    order=order,
                    code=str(problem.code),
                    mp_line_number=problem.mp_line_number,
                    message=problem.message,
                    detail=problem.detail,
                    fingerprint=problem.fingerprint,
                    last_seen_at=now,
                )
            )
        else:
            row.last_seen_at = now
            row.message = problem.message
            row.resolved_at = None  # back again: open, but already reported once
            touched.append(row)
    for fingerprint, row in existing.items():
        if fingerprint not in found and row.resolved_at is None:
            row.resolved_at = now
            touched.append(row)
            events.append(
                _event(
                    order,
                    SyncEvent.Kind.PROBLEM_RESOLVED,
                    f"{row.code} {row.mp_line_number}: no longer in the seller's fulfillment",
                )
            )
    if created:
        ValidationProblem.objects.bulk_create(created)
    if touched:
        ValidationProblem.objects.bulk_update(touched, ["last_seen_at", "message", "resolved_at"])
    unreported = bool(created) or any(
        existing[fingerprint].reported_at is None for fingerprint in found & existing.keys()
    )
    return unreported, events


def _problem_of(row: ValidationProblem) -> Problem:
    """The recorded problem as found (its fingerprint's key is not kept: not reported)."""
    return Problem(
        code=ProblemCode(row.code),
        message=row.message,
        mp_line_number=row.mp_line_number,
        detail=row.detail or {},
    )


def order_problems_report(*, order_id: int, client: OrderSourceClient | None = None) -> int:
    """POST every open, unreported problem of the order once; returns how many were sent.

    The rows are marked reported only after the platform accepted them. A failed post
    leaves them unreported for the next pull (``report_error`` says why).
    """
    rows = list(
        ValidationProblem.objects.filter(
            order_id=order_id, reported_at__isnull=True, resolved_at__isnull=True
        )
        .select_related("order")  # its number without another query
        .order_by("id")
    )
    if not rows:
        return 0
    order = rows[0].order
    client = client or order_client_for_seller(order.seller)
    body = [_problem_of(row).as_report() for row in rows]
    try:
        client.post_errors(order.mp_order_number, body)
    except PlatformError as exc:
        ValidationProblem.objects.filter(pk__in=[r.pk for r in rows]).update(
            report_error=str(exc)[:2000]
        )
        logger.warning("could not report problems of order %s: %s", order.mp_order_number, exc)
        return 0
    now = timezone.now()
    with transaction.atomic():
        ValidationProblem.objects.filter(pk__in=[r.pk for r in rows]).update(
            reported_at=now, report_error=""
        )
        sync_event_add(
            order_id=order_id,
            kind=SyncEvent.Kind.PROBLEM_REPORTED,
            message="; ".join(f"{r.code} {r.mp_line_number}".strip() for r in rows),
            detail={"codes": [r.code for r in rows]},
        )
    return len(rows)


def order_settle(*, order_id: int, actor: str = SETTLE_ACTOR) -> str | None:
    """Settle the order if every line is shipped or cancelled and no problem is open.

    Returns the new state, or None when the order is not settled (yet).
    """
    with transaction.atomic():
        order = Order.objects.select_for_update(no_key=True).get(pk=order_id)
        return _settle_write(order, _settle_target(order), actor=actor, fields=[], events=[])


def _settle_write(
    order: Order,
    target: str | None,
    *,
    actor: str,
    fields: list[str],
    events: list[SyncEvent],
) -> str | None:
    """Save the locked order (``fields``, plus its state if it settles) and ``events``.

    One UPDATE and one INSERT whatever the caller changed before; the SETTLED event goes
    after the caller's, and the outbox (its QUEUED event, the push) after the order row:
    Order is locked before OrderSync, as everywhere.
    """
    settled = target is not None and transition_allowed(order.state, target)
    previous = order.state
    if settled and target is not None:  # (settled implies it: said for the type checker)
        order.state = target
        fields = [*fields, "state", "updated_at"]
        events = [
            *events,
            _event(
                order,
                SyncEvent.Kind.SETTLED,
                f"every line is shipped or cancelled: {previous} → {target}",
                actor=actor,
            ),
        ]
    if fields:
        order.save(update_fields=list(dict.fromkeys(fields)))
    if events:
        SyncEvent.objects.bulk_create(events)
    if not settled:
        return None
    order_sync_mark_changed(order=order, actor=actor, message=f"{previous} → {target}")
    return target


def _settle_target(order: Order) -> str | None:
    """``_settle_rule`` on what is stored for the order."""
    if order.state not in SETTLEABLE_STATES:
        return None  # nothing to read
    if ValidationProblem.objects.filter(order=order, resolved_at__isnull=True).exists():
        return None
    lines = OrderLine.objects.filter(order=order).prefetch_related("shipments", "cancellations")
    return _settle_rule(
        order.state,
        open_problems=False,
        lines=[
            LineTotal(
                line.quantity,
                sum(s.quantity for s in line.shipments.all()),
                sum(c.quantity for c in line.cancellations.all()),
            )
            for line in lines
        ],
    )


def _settle_rule(state: str, *, open_problems: bool, lines: Iterable[LineTotal]) -> str | None:
    """SHIPPED when every line is shipped or cancelled and something shipped; CANCELLED
    when everything was cancelled; None while a line is open, a problem is open or the
    order is past settling."""
    if state not in SETTLEABLE_STATES or open_problems:
        return None
    shipped_any = False
    seen = False
    for line in lines:
        if line.shipped + line.cancelled != line.ordered:
            return None
        shipped_any = shipped_any or line.shipped > 0
        seen = True
    if not seen:
        return None
    return MarketplaceState.SHIPPED if shipped_any else MarketplaceState.CANCELLED
