"""Storing a listed seller refund as the current version of its row.

The reference's lifecycle (``…/refunds/get-order-refund-by-id``): ``CREATED`` (to decide)
→ our errors call → ``PAUSED`` → the seller corrects it → ``CREATED`` again, same
``feedamp_refund_id``, corrected lines, no active errors → decided again from scratch →
``COMPLETE`` once we mark it. One ``SellerRefund`` row per feedamp id holds the current
version: its lines, ``version`` (bumped for each corrected version) and ``lines_digest``
(which lines a decision judged; an errors call is sent only while the platform still
holds those lines, ``steps.py``).

What a listing (``refund_status=CREATED``) tells us about a row we hold:

* accepted, or ``COMPLETE``: nothing (paid once; our complete call may still be on its
  way, so the platform lists it ``CREATED`` meanwhile);
* refused and our errors call not through yet: nothing (the call re-reads first);
* refused and ``PAUSED`` by our errors call, and the listing was read after that pause:
  the seller corrected it. A new version: its lines stored, the decision cleared, decided
  again (nothing of the paused version was accepted);
* not decided: stored if its lines changed, then decided.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_date

from marketplace.orders.models import Order, OrderLine
from marketplace.returns.amounts import REFUND_AMOUNT_FIELDS, line_amounts_read
from marketplace.returns.models import Decision, RefundStatus, SellerRefund, SellerRefundLine


class UnreadableRecord(ValueError):
    """A listed record whose shape we cannot hold (recorded as the record's problem)."""


def canonical_digest(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()


def lines_digest(entry: dict[str, Any]) -> str:
    """What a decision judges: the refund's lines as the platform sent them."""
    lines = entry.get("merchant_refund_lines")
    return canonical_digest(lines if isinstance(lines, list) else [])


def _date_created(value: Any) -> date | None:
    """A date (``YYYY-MM-DD``, the reference); a date-time's date is taken as well."""
    if not isinstance(value, str):
        return None
    return parse_date(value[:10])


def _notes(value: Any) -> str:
    """``notes`` may be any JSON value (the reference): text as it is, others as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _read_lines(
    entry: dict[str, Any], currency: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The entry's lines with their amounts read strictly (``amounts.py``: an amount that
    cannot be read is ``None``, never 0.00), and the problems found: the decision refuses
    the refund with their codes (it pauses; the seller corrects it)."""
    parsed, problems = [], []
    for item in entry.get("merchant_refund_lines") or []:
        if not isinstance(item, dict):
            raise UnreadableRecord("a refund line is not an object")
        number = str(item.get("mp_line_number") or "")[:128]
        quantity = item.get("refund_quantity")
        amounts, errors = line_amounts_read(
            item, fields=REFUND_AMOUNT_FIELDS, currency=currency, label=number
        )
        problems += [{"code": e.code, "message": e.message, "label": number} for e in errors]
        parsed.append(
            {
                "mp_line_number": number,
                "currency": str(item.get("currency") or "")[:3],
                "refund_quantity": quantity
                if isinstance(quantity, int) and not isinstance(quantity, bool)
                else 0,
                "reason": str(item.get("reason") or "")[:128],
                **amounts,
            }
        )
    return parsed, problems


def refund_version_store(
    *, seller_id: int, order: Order, entry: dict[str, Any], listed_at: datetime
) -> int | None:
    """Store a listed ``CREATED`` refund; the row's pk when it is to be decided, else None.

    Call inside a transaction (the caller's savepoint): the row is locked while it is
    compared and written. ``listed_at``: when the page was asked for (a pause of ours
    after it makes the entry stale)."""
    refund_id = str(entry.get("feedamp_refund_id") or "")
    seen = lines_digest(entry)
    lines, read_problems = _read_lines(entry, order.currency)
    refund, created = SellerRefund.objects.get_or_create(
        seller_id=seller_id,
        refund_id=refund_id,
        defaults={"order": order, "status": RefundStatus.CREATED},
    )
    refund = SellerRefund.objects.select_for_update().get(pk=refund.pk)
    new_version = False
    if not created:
        if refund.decision == Decision.ACCEPTED or refund.status == RefundStatus.COMPLETE:
            return None
        if refund.decision == Decision.REFUSED:
            if refund.status != RefundStatus.PAUSED:
                return None  # our errors call is on its way (it re-reads first)
            if refund.paused_at is not None and refund.paused_at >= listed_at:
                return None  # listed before our pause reached the platform
            new_version = True  # the seller corrected it: back to CREATED
        elif refund.lines_digest == seen:
            return refund.pk  # not decided yet (an earlier try failed): decide now
        else:
            new_version = bool(refund.lines_digest)
    if new_version:
        refund.version += 1
    refund.status = RefundStatus.CREATED
    refund.decision = Decision.NONE
    refund.decided_at = None
    refund.notes = _notes(entry.get("notes"))
    refund.date_created = _date_created(entry.get("date_created"))
    refund.lines_digest = seen
    refund.read_problems = read_problems
    refund.platform_digest = canonical_digest(entry)
    refund.pulled_at = timezone.now()
    refund.save()
    refund.lines.all().delete()
    order_lines = {line.mp_line_number: line for line in OrderLine.objects.filter(order=order)}
    SellerRefundLine.objects.bulk_create(
        SellerRefundLine(refund=refund, order_line=order_lines.get(line["mp_line_number"]), **line)
        for line in lines
    )
    return refund.pk
