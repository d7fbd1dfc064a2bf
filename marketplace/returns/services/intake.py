"""Intake of a buyer's return: validate against the order, store, queue its push.

Idempotent: the same body under the same return number answers the stored return; a
different body is a conflict. The order row is locked while the quantities are checked,
so two returns of the same units sent at once cannot both pass.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from marketplace.orders.errors import IntakeInvalid, OrderNotFound
from marketplace.orders.models import Order, OrderLine, Shipment
from marketplace.returns.errors import ReturnConflict
from marketplace.returns.intake_schema import ReturnIn
from marketplace.returns.models import Return, ReturnLine, ReturnStatus, StepKind
from marketplace.returns.money import requested_refund
from marketplace.returns.services.steps import step_add


def return_fingerprint(data: ReturnIn) -> str:
    """SHA-256 of the body after validation (key order and whitespace do not matter). The
    default ``return_type`` is left out: returns stored before it existed keep their
    fingerprint."""
    body = data.model_dump(
        mode="json", exclude={"return_type"} if data.return_type == "SHIP" else None
    )
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def returnable_quantities(*, order: Order) -> dict[int, int]:
    """Per order line id: shipped units less those earlier returns took (a rejected
    return takes nothing)."""
    shipped = dict(
        Shipment.objects.filter(line__order=order)
        .values_list("line_id")
        .annotate(total=Sum("quantity"))
        .values_list("line_id", "total")
    )
    returned = dict(
        ReturnLine.objects.filter(return_request__order=order)
        .exclude(return_request__status=ReturnStatus.REJECTED)
        .values_list("order_line_id")
        .annotate(total=Sum("quantity"))
        .values_list("order_line_id", "total")
    )
    return {
        line_id: max(0, (shipped.get(line_id) or 0) - (returned.get(line_id) or 0))
        for line_id in OrderLine.objects.filter(order=order).values_list("id", flat=True)
    }


def _line_errors(
    data: ReturnIn, lines: dict[str, OrderLine], returnable: dict[int, int]
) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    seen: set[str] = set()
    for index, item in enumerate(data.return_lines):
        path = f"return_lines.{index}"
        line = lines.get(item.mp_line_number)
        if line is None:
            errors[f"{path}.mp_line_number"] = [
                f"order line {item.mp_line_number} is not on this order"
            ]
            continue
        if item.mp_line_number in seen:
            errors[f"{path}.mp_line_number"] = ["line named twice in this return"]
            continue
        seen.add(item.mp_line_number)
        left = returnable.get(line.id, 0)
        if item.quantity > left:
            errors[f"{path}.quantity"] = [
                f"line {item.mp_line_number}: {item.quantity} returned but only {left} "
                "shipped and not yet returned"
            ]
    return errors


def return_create(
    *, mp_order_number: str, data: ReturnIn, actor: str = "intake"
) -> tuple[Return, bool]:
    """Store a new return of a shipped order and queue its push; ``(return, created)``."""
    fingerprint = return_fingerprint(data)
    with transaction.atomic():
        order = (
            Order.objects.select_for_update(no_key=True)
            .filter(mp_order_number=mp_order_number)
            .first()
        )
        if order is None:
            raise OrderNotFound(mp_order_number)
        existing = Return.objects.filter(
            order=order, mp_return_number=data.mp_return_number
        ).first()
        if existing is not None:
            if existing.intake_fingerprint != fingerprint:
                raise ReturnConflict(mp_order_number, data.mp_return_number)
            return existing, False
        lines = {line.mp_line_number: line for line in order.lines.all()}
        errors = _line_errors(data, lines, returnable_quantities(order=order))
        if errors:
            raise IntakeInvalid(errors)
        request_date = data.request_date or timezone.localdate()
        return_request = Return.objects.create(
            order=order,
            seller_id=order.seller_id,
            mp_return_number=data.mp_return_number,
            reason=data.reason,
            carrier=data.carrier or "",
            tracking_number=data.tracking_number or "",
            request_date=request_date,
            respond_date=request_date + timedelta(days=settings.RETURN_RESPOND_DAYS),
            return_type=data.return_type,
            intake_fingerprint=fingerprint,
        )
        new_lines = []
        for number, item in enumerate(data.return_lines, start=1):
            line = lines[item.mp_line_number]
            principal, tax = requested_refund(line, item.quantity)
            new_lines.append(
                ReturnLine(
                    return_request=return_request,
                    mp_return_line_number=str(number),
                    order_line=line,
                    quantity=item.quantity,
                    preauthorized=data.preauthorized,
                    requested_refund_principal=principal,
                    requested_refund_tax=tax,
                )
            )
        ReturnLine.objects.bulk_create(new_lines)
        step_add(
            kind=StepKind.PUSH_RETURN,
            seller_id=order.seller_id,
            return_id=return_request.id,
        )
        # A return is open work: the sync's next tick brings a backed-off seller back to
        # the short interval (marketplace.sync.schedule.sync_wake_open_work).
    return return_request, True
