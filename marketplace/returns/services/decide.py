"""Deciding a seller's refund or a return's refund: accept (ledger + complete) or refuse
(report the errors), exactly once.

One transaction per decision: the refund (or return) row is locked and re-read (already
decided → nothing to do), then the order lines it touches, in id order; the ledger is
read under those locks, so two refunds of one line decided at once are decided one after
the other, and the second sees the first's ledger rows. The ledger rows and the
platform step (complete / errors) are written in the same transaction as the decision:
a crash before the commit leaves nothing (the next pull decides again); after it, the
step is in the outbox. The ledger's unique constraints make a second row impossible.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from marketplace.orders.models import OrderLine
from marketplace.platform.returns_refunds import decimal_amount
from marketplace.returns.checks import LineCost, Problem, TakeIn, Verdict, refund_check
from marketplace.returns.models import (
    Decision,
    RefundLedgerEntry,
    Return,
    ReturnStatus,
    SellerRefund,
    StepKind,
)
from marketplace.returns.money import ZERO, line_paid
from marketplace.returns.problems import RefundProblemCode as ProblemCode
from marketplace.returns.services.steps import step_add


def _costs(order_id: int, line_numbers: set[str]) -> tuple[dict[str, LineCost], dict[str, int]]:
    """Lock the order's named lines (id order) and read what each has left."""
    lines = list(
        OrderLine.objects.select_for_update()
        .filter(order_id=order_id, mp_line_number__in=line_numbers)
        .order_by("id")
    )
    accepted = dict(
        RefundLedgerEntry.objects.filter(order_line__in=lines)
        .values_list("order_line_id")
        .annotate(total=Sum("amount"))
        .values_list("order_line_id", "total")
    )
    costs = {
        line.mp_line_number: LineCost(
            mp_line_number=line.mp_line_number,
            quantity=line.quantity,
            paid=line_paid(line),
            accepted=accepted.get(line.id) or ZERO,
        )
        for line in lines
    }
    return costs, {line.mp_line_number: line.id for line in lines}


def _ledger_write(
    *,
    verdict: Verdict,
    line_ids: dict[str, int],
    order_id: int,
    currency: str,
    refund: SellerRefund | None = None,
    return_request: Return | None = None,
    details: dict[str, dict[str, str]],
) -> None:
    RefundLedgerEntry.objects.bulk_create(
        RefundLedgerEntry(
            order_id=order_id,
            order_line_id=line_ids[number],
            refund=refund,
            return_request=return_request,
            currency=currency,
            amount=amount,
            detail=details.get(number, {}),
        )
        for number, amount in sorted(verdict.takes.items())
    )


def refund_decide(*, refund_pk: int) -> str:
    """Decide a seller's refund (idempotent: a decided refund is left as it is)."""
    with transaction.atomic():
        refund = SellerRefund.objects.select_for_update().select_related("order").get(pk=refund_pk)
        if refund.decision:
            return refund.decision
        lines = list(refund.lines.all())
        costs, line_ids = _costs(refund.order_id, {line.mp_line_number for line in lines})
        verdict = refund_check(
            lines=[
                TakeIn(
                    label=line.mp_line_number,
                    mp_line_number=line.mp_line_number if line.order_line_id else "",
                    currency=line.currency,
                    takes=line.takes,
                    quantity=line.refund_quantity,
                )
                for line in lines
            ],
            costs=costs,
            currency=refund.order.currency,
            excess_code=ProblemCode.EXCESS_ITEM_REFUND,
        )
        if not lines:
            verdict.problems.append(Problem(ProblemCode.UNKNOWN_LINE, "the refund has no lines"))
        details: dict[str, dict[str, str]] = defaultdict(dict)
        for line in lines:
            part = details[line.mp_line_number]
            for name in (
                "item_refund",
                "item_tax_refund",
                "shipping_refund",
                "shipping_tax_refund",
                "discount_refund",
            ):
                previous = Decimal(part.get(name, "0"))
                part[name] = str(previous + getattr(line, name))
        _decide(
            refund=refund,
            verdict=verdict,
            line_ids=line_ids,
            details=details,
            errors=[{"code": p.code, "message": p.message} for p in verdict.problems],
        )
        return refund.decision


def _decide(
    *,
    refund: SellerRefund,
    verdict: Verdict,
    line_ids: dict[str, int],
    details: dict[str, dict[str, str]],
    errors: list[dict[str, str]],
) -> None:
    refund.decided_at = timezone.now()
    if verdict.accepted:
        refund.decision = Decision.ACCEPTED
        _ledger_write(
            verdict=verdict,
            line_ids=line_ids,
            order_id=refund.order_id,
            currency=refund.order.currency,
            refund=refund,
            details=details,
        )
        step_add(kind=StepKind.COMPLETE_REFUND, seller_id=refund.seller_id, refund_id=refund.pk)
    else:
        refund.decision = Decision.REFUSED
        refund.errors = errors
        step_add(
            kind=StepKind.REPORT_REFUND,
            seller_id=refund.seller_id,
            refund_id=refund.pk,
            body=errors,
        )
    refund.save(update_fields=["decision", "decided_at", "errors", "updated_at"])


def return_decide(*, return_pk: int, refund_lines: list[dict[str, object]]) -> str:
    """Decide a REFUNDED return from the seller's amounts (``.../refunds``'s
    ``merchant_refund_lines``, amounts as Decimals). Idempotent."""
    with transaction.atomic():
        return_request = (
            Return.objects.select_for_update().select_related("order").get(pk=return_pk)
        )
        if return_request.decision:
            return return_request.decision
        ours = {
            line.mp_return_line_number: line
            for line in return_request.lines.select_related("order_line")
        }
        currency = return_request.order.currency
        takes: list[TakeIn] = []
        details: dict[str, dict[str, str]] = defaultdict(dict)
        for item in refund_lines:
            label = str(item.get("mp_return_line_number") or "")
            line = ours.get(label)
            principal = _amount(item.get("principal_refund_amount"))
            shipping = _amount(item.get("shipping_refund_amount"))
            number = line.order_line.mp_line_number if line else ""
            takes.append(
                TakeIn(
                    label=label,
                    mp_line_number=number,
                    currency=currency,
                    takes=principal + shipping,
                )
            )
            if line is not None:
                line.principal_refund_amount = principal
                line.shipping_refund_amount = shipping
                line.save(update_fields=["principal_refund_amount", "shipping_refund_amount"])
                part = details[number]
                part["principal_refund_amount"] = str(
                    Decimal(part.get("principal_refund_amount", "0")) + principal
                )
                part["shipping_refund_amount"] = str(
                    Decimal(part.get("shipping_refund_amount", "0")) + shipping
                )
        costs, line_ids = _costs(
            return_request.order_id, {t.mp_line_number for t in takes if t.mp_line_number}
        )
        verdict = refund_check(
            lines=takes, costs=costs, currency=currency, excess_code=ProblemCode.EXCESS_REFUND
        )
        return_request.decided_at = timezone.now()
        return_request.status = ReturnStatus.REFUNDED
        if verdict.accepted:
            return_request.decision = Decision.ACCEPTED
            _ledger_write(
                verdict=verdict,
                line_ids=line_ids,
                order_id=return_request.order_id,
                currency=currency,
                return_request=return_request,
                details=details,
            )
            step_add(
                kind=StepKind.COMPLETE_RETURN,
                seller_id=return_request.seller_id,
                return_id=return_request.pk,
            )
        else:
            errors = [
                {"code": p.code, "message": p.message, "mp_return_line_number": p.label}
                if p.label in ours
                else {"code": p.code, "message": p.message}
                for p in verdict.problems
            ]
            return_request.decision = Decision.REFUSED
            return_request.errors = errors
            step_add(
                kind=StepKind.REPORT_RETURN,
                seller_id=return_request.seller_id,
                return_id=return_request.pk,
                body=errors,
            )
        return_request.save(
            update_fields=["decision", "decided_at", "errors", "status", "updated_at"]
        )
        return return_request.decision


def _amount(value: object) -> Decimal:
    return decimal_amount(value) or ZERO
