"""A return rebuilt from the platform's record after a database restore.

Returns are ours (the back office creates them through intake and we push them), so a
restore from last night's backup loses the ones created since while the platform keeps
them. ``return_adopt`` rebuilds one from the platform's record (``GET /returns``: its
lines with the order line each names, the quantities and the refund asked for), its push
step already done (the platform has it). What the seller did with it since (authorized,
refunded, completed) is then read by the caller through the normal record path
(``return_progress.py``) or, when the platform already shows it complete, recorded
once from the platform's record (``decide.return_decide(after_restore=True)``).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_date

from marketplace.orders.models import Order
from marketplace.returns.models import (
    PlatformStep,
    Return,
    ReturnLine,
    ReturnType,
    StepKind,
    StepStatus,
)


class ReturnRecordUnreadable(ValueError):
    """A platform return we cannot rebuild (left to staff)."""


def _amount(value: Any) -> Decimal:
    try:
        return Decimal(str(value if value is not None else 0))
    except InvalidOperation as exc:
        raise ReturnRecordUnreadable(f"not an amount: {value!r}") from exc


def return_adopt(*, order: Order, record: dict[str, Any]) -> Return:
    """Rebuild the return ``record`` of ``order`` (which we hold); its push marked done."""
    number = str(record.get("mp_return_number") or "")[:128]
    request_date = parse_date(str(record.get("request_date") or "")[:10])
    respond_date = parse_date(str(record.get("respond_date") or "")[:10])
    items = record.get("return_lines")
    if not number or request_date is None or respond_date is None or not items:
        raise ReturnRecordUnreadable("a return without a number, its dates or lines")
    order_lines = {line.mp_line_number: line for line in order.lines.all()}
    first = items[0] if isinstance(items[0], dict) else {}
    return_type = str(record.get("return_type") or ReturnType.SHIP)
    with transaction.atomic():
        return_request = Return.objects.create(
            order=order,
            seller_id=order.seller_id,
            mp_return_number=number,
            reason=str(first.get("reason") or ""),
            carrier=str(first.get("carrier") or "")[:64],
            tracking_number=str(first.get("tracking_number") or "")[:128],
            request_date=request_date,
            respond_date=respond_date,
            return_type=return_type if return_type in ReturnType.values else ReturnType.SHIP,
            # Not from intake: a retried create of this number gets a 409 to look at.
            intake_fingerprint="",
        )
        lines = []
        for item in items:
            line = order_lines.get(str((item or {}).get("mp_order_line_number") or ""))
            quantity = (item or {}).get("quantity")
            if line is None or not isinstance(quantity, int) or quantity < 1:
                raise ReturnRecordUnreadable(f"return {number}: a line we cannot place: {item!r}")
            lines.append(
                ReturnLine(
                    return_request=return_request,
                    mp_return_line_number=str(item.get("mp_return_line_number") or "")[:128],
                    order_line=line,
                    quantity=quantity,
                    preauthorized=bool(item.get("preauthorized")),
                    requested_refund_principal=_amount(item.get("requested_refund_principal")),
                    requested_refund_tax=_amount(item.get("requested_refund_tax")),
                )
            )
        ReturnLine.objects.bulk_create(lines)
        PlatformStep.objects.create(
            kind=StepKind.PUSH_RETURN,
            seller_id=order.seller_id,
            return_request=return_request,
            status=StepStatus.DONE,
            done_at=timezone.now(),
        )
    return return_request
