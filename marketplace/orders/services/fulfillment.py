"""What the seller sent back: store it, validate it, report problems, settle the order.

``order_fulfillment_apply`` stores one order's fulfillment as pulled (replacing what was
there: re-reading is idempotent), records validation problems by fingerprint and
resolves the ones that disappeared. ``order_problems_report`` tells the platform about
problems not reported yet (each once). ``order_settle`` moves a fully shipped or
cancelled order without open problems to SHIPPED (or CANCELLED) and queues that push.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime
from typing import Any

from django.db import transaction
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
from marketplace.orders.validation import fulfillment_problems, parse_fulfillments
from marketplace.platform.client import PlatformClient
from marketplace.platform.errors import PlatformError

logger = logging.getLogger(__name__)


def _digest(body: dict[str, Any]) -> str:
    relevant = {"status": body.get("status"), "fulfillments": body.get("fulfillments")}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()


def order_fulfillment_apply(
    *, order_id: int, body: dict[str, Any], seller_updated_at: datetime | None = None
) -> bool:
    """Store the pulled fulfillment of one order; returns True if anything changed."""
    now = timezone.now()
    digest = _digest(body)
    with transaction.atomic():
        order = Order.objects.select_for_update(no_key=True).get(pk=order_id)
        order.platform_seller_updated_at = seller_updated_at or order.platform_seller_updated_at
        order.fulfillment_pulled_at = now
        if order.fulfillment_digest == digest:
            order.save(
                update_fields=["platform_seller_updated_at", "fulfillment_pulled_at", "updated_at"]
            )
            return False
        lines = {line.mp_line_number: line for line in OrderLine.objects.filter(order=order)}
        parsed = parse_fulfillments(body)
        Shipment.objects.filter(line__order=order).delete()
        LineCancellation.objects.filter(line__order=order).delete()
        shipments, cancellations = [], []
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
        Shipment.objects.bulk_create(shipments)
        LineCancellation.objects.bulk_create(cancellations)
        order.fulfillment_status = str(body.get("status") or "")[:32]
        order.fulfillment_digest = digest
        order.save(
            update_fields=[
                "platform_seller_updated_at",
                "fulfillment_pulled_at",
                "fulfillment_status",
                "fulfillment_digest",
                "updated_at",
            ]
        )
        sync_event_add(
            order_id=order.id,
            kind=SyncEvent.Kind.FULFILLMENT_STORED,
            message=(
                f"{sum(s.quantity for s in shipments)} shipped in {len(shipments)} shipment(s), "
                f"{sum(c.quantity for c in cancellations)} cancelled; "
                f"platform status {order.fulfillment_status or 'unknown'}"
            ),
        )
        problems = fulfillment_problems(
            parsed,
            ordered={number: line.quantity for number, line in lines.items()},
            purchase_date=order.purchase_date,
            today=now.date(),
        )
        _problems_record(order, problems, now)
    return True


def _problems_record(order: Order, problems: list[Any], now: datetime) -> None:
    existing = {p.fingerprint: p for p in ValidationProblem.objects.filter(order=order)}
    found = set()
    for problem in problems:
        found.add(problem.fingerprint)
        row = existing.get(problem.fingerprint)
        if row is None:
            ValidationProblem.objects.create(
                order=order,
                code=str(problem.code),
                mp_line_number=problem.mp_line_number,
                message=problem.message,
                detail=problem.detail,
                fingerprint=problem.fingerprint,
                last_seen_at=now,
            )
        else:
            row.last_seen_at = now
            row.message = problem.message
            row.resolved_at = None  # back again: open, but already reported once
            row.save(update_fields=["last_seen_at", "message", "resolved_at"])
    for fingerprint, row in existing.items():
        if fingerprint not in found and row.resolved_at is None:
            row.resolved_at = now
            row.save(update_fields=["resolved_at"])
            sync_event_add(
                order_id=order.id,
                kind=SyncEvent.Kind.PROBLEM_RESOLVED,
                message=f"{row.code} {row.mp_line_number}: no longer in the seller's fulfillment",
            )


def order_problems_report(*, order_id: int, client: PlatformClient | None = None) -> int:
    """POST every open, unreported problem of the order once; returns how many were sent.

    The rows are marked reported only after the platform accepted them. A failed post
    leaves them unreported for the next pull (``report_error`` says why).
    """
    rows = list(
        ValidationProblem.objects.filter(
            order_id=order_id, reported_at__isnull=True, resolved_at__isnull=True
        ).order_by("id")
    )
    if not rows:
        return 0
    order = Order.objects.select_related("seller").get(pk=order_id)
    client = client or PlatformClient.for_seller(order.seller)
    body = []
    for row in rows:
        item: dict[str, Any] = {"code": row.code, "message": row.message}
        if row.mp_line_number:
            item["mp_line_number"] = row.mp_line_number
        if row.detail:
            item["debug"] = [row.detail]
        body.append(item)
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


def order_settle(*, order_id: int, actor: str = "settle") -> str | None:
    """Settle the order if every line is shipped or cancelled and no problem is open.

    Returns the new state, or None when the order is not settled (yet).
    """
    with transaction.atomic():
        order = Order.objects.select_for_update(no_key=True).get(pk=order_id)
        target = _settle_target(order)
        if target is None or not transition_allowed(order.state, target):
            return None
        previous = order.state
        order.state = target
        order.save(update_fields=["state", "updated_at"])
        sync_event_add(
            order_id=order.id,
            kind=SyncEvent.Kind.SETTLED,
            actor=actor,
            message=f"every line is shipped or cancelled: {previous} → {target}",
        )
        order_sync_mark_changed(order=order, actor=actor, message=f"{previous} → {target}")
    return target


def _settle_target(order: Order) -> str | None:
    if order.state not in (MarketplaceState.PENDING, MarketplaceState.AWAITING_SHIPMENT):
        return None
    if ValidationProblem.objects.filter(order=order, resolved_at__isnull=True).exists():
        return None
    lines = list(
        OrderLine.objects.filter(order=order).prefetch_related("shipments", "cancellations")
    )
    shipped_any = False
    for line in lines:
        shipped = sum(s.quantity for s in line.shipments.all())
        cancelled = sum(c.quantity for c in line.cancellations.all())
        if shipped + cancelled != line.quantity:
            return None
        shipped_any = shipped_any or shipped > 0
    if not lines:
        return None
    return MarketplaceState.SHIPPED if shipped_any else MarketplaceState.CANCELLED
