"""Deciding a seller's refund or a return's refund: accept (ledger + complete) or refuse
(report the errors), exactly once per version.

A refused refund is paused at the platform by our errors; when the seller corrects it, it
comes back ``CREATED`` as a new version of the same row (``refund_versions.py`` clears
the decision) and is decided here again from scratch: nothing of the paused version was
accepted, so the ledger holds nothing of it. Each decision's platform step carries the
version and the digest of the lines it judged (its errors are sent only for those).

One transaction per decision: the refund (or return) row is locked and re-read (already
decided → nothing to do), then the order lines it touches, in id order; the ledger is
read under those locks, so two refunds of one line decided at once are decided one after
the other, and the second sees the first's ledger rows. The ledger rows and the
platform step (complete / errors) are written in the same transaction as the decision:
a crash before the commit leaves nothing (the next pull decides again); after it, the
step is in the outbox. The ledger's unique constraints make a second row impossible.

Amounts are read strictly before any check (``amounts.py``): a refund or return with an
amount that is not a number, missing (null is not zero), out of range or finer than the
currency's minor unit, a REFUNDED return with no refund lines, or a return line named
twice in one answer is refused with its code, never accepted at 0.00. The ledger gets
exactly the amounts decided (no rounding: they are already in the currency's unit).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from marketplace.orders.models import OrderLine
from marketplace.returns.amounts import (
    REFUND_AMOUNT_FIELDS,
    RETURN_AMOUNT_FIELDS,
    in_unit,
    line_amounts_read,
)
from marketplace.returns.checks import LineCost, Problem, TakeIn, Verdict, refund_check
from marketplace.returns.models import (
    Decision,
    RefundLedgerEntry,
    Return,
    ReturnStatus,
    SellerRefund,
    SellerRefundLine,
    StepKind,
)
from marketplace.returns.money import ZERO, line_paid
from marketplace.returns.problems import RefundProblemCode as ProblemCode
from marketplace.returns.problems import platform_code, platform_message
from marketplace.returns.services.steps import step_add


def _costs(
    order_id: int, line_numbers: set[str], currency: str
) -> tuple[dict[str, LineCost], dict[str, int]]:
    """Lock the order's named lines (id order) and read what each has left, in the
    order currency's unit."""
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
            paid=_tidy(line_paid(line), currency),
            accepted=_tidy(accepted.get(line.id) or ZERO, currency),
        )
        for line in lines
    }
    return costs, {line.mp_line_number: line.id for line in lines}


def _tidy(amount: Decimal, currency: str) -> Decimal:
    """An amount we hold (what the buyer paid, what the ledger sums to) in the currency's
    unit when it is a whole number of units; as it is otherwise (the order's amounts are
    the orders app's, and rows from before the strict reading may be finer). Never
    rounded."""
    try:
        return in_unit(amount, currency)
    except ValueError:
        return amount


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
        unreadable = _refund_read_problems(refund, lines)
        if unreadable:
            _decide(refund=refund, verdict=Verdict(problems=unreadable), line_ids={}, details={})
            return refund.decision
        currency = refund.order.currency
        costs, line_ids = _costs(refund.order_id, {line.mp_line_number for line in lines}, currency)
        verdict = refund_check(
            lines=[
                TakeIn(
                    label=line.mp_line_number,
                    mp_line_number=line.mp_line_number if line.order_line_id else "",
                    currency=line.currency,
                    # Read back from a 3-place column: in the order currency's unit again
                    # (the pull read it strictly in that currency).
                    takes=in_unit(line.takes, currency),
                    quantity=line.refund_quantity,
                )
                for line in lines
            ],
            costs=costs,
            currency=currency,
            excess_code=ProblemCode.EXCESS_ITEM_REFUND,
        )
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
                part[name] = str(in_unit(previous + getattr(line, name), currency))
        _decide(refund=refund, verdict=verdict, line_ids=line_ids, details=details)
        return refund.decision


def _refund_read_problems(refund: SellerRefund, lines: list[SellerRefundLine]) -> list[Problem]:
    """What makes a refund impossible to check: amounts the pull could not read (its
    ``read_problems``), and no lines at all. Two lines on one order line are not among
    them: the platform lists a v2 refund's lines for one order line as separate v1 lines
    (their sum is what the refund takes, and the ledger's one row for the line)."""
    problems = [
        Problem(str(p.get("code") or ""), str(p.get("message") or ""), str(p.get("label") or ""))
        for p in refund.read_problems or []
        if isinstance(p, dict)
    ]
    named = {p.label for p in problems}
    currency = refund.order.currency
    for line in lines:
        if not line.readable:
            if line.mp_line_number not in named:
                problems.append(
                    Problem(
                        ProblemCode.MISSING_AMOUNT,
                        f"line {line.mp_line_number}: an amount could not be read",
                        line.mp_line_number,
                    )
                )
            continue
        # Stored amounts in the order currency's unit (rows stored before the strict
        # reading may not be): refused, never rounded.
        for name in REFUND_AMOUNT_FIELDS:
            value = getattr(line, name)
            try:
                in_unit(value, currency)
            except ValueError as exc:
                problems.append(
                    Problem(
                        getattr(exc, "code", ProblemCode.AMOUNT_TOO_PRECISE),
                        f"line {line.mp_line_number} {name}: {value} is not a whole number "
                        f"of {currency} minor units",
                        line.mp_line_number,
                    )
                )
    if not lines:
        problems.append(Problem(ProblemCode.NO_REFUND_LINES, "the refund has no lines"))
    return problems


def _reported(
    problems: list[Problem], *, line_labels: set[str] | None = None
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(what we keep, what we send): the platform's code and a message naming ours when
    the platform's is its catch-all; we keep our own code too (``problem``), for the
    portal's and staff's plain words. A return's errors name its line when it is one."""
    body: list[dict[str, str]] = []
    for p in problems:
        error = {"code": platform_code(p.code), "message": platform_message(p.code, p.message)}
        if line_labels is not None and p.label in line_labels:
            error["mp_return_line_number"] = p.label
        body.append(error)
    kept = [{**error, "problem": str(p.code)} for error, p in zip(body, problems, strict=True)]
    return kept, body


def _decide(
    *,
    refund: SellerRefund,
    verdict: Verdict,
    line_ids: dict[str, int],
    details: dict[str, dict[str, str]],
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
        step_add(
            kind=StepKind.COMPLETE_REFUND,
            seller_id=refund.seller_id,
            refund_id=refund.pk,
            version=refund.version,
            judged_digest=refund.lines_digest,
        )
    else:
        refund.decision = Decision.REFUSED
        refund.errors, body = _reported(verdict.problems)
        step_add(
            kind=StepKind.REPORT_REFUND,
            seller_id=refund.seller_id,
            refund_id=refund.pk,
            body=body,
            version=refund.version,
            judged_digest=refund.lines_digest,
        )
    refund.save(update_fields=["decision", "decided_at", "errors", "updated_at"])


def return_decide(*, return_pk: int, refund_lines: Any, judged_digest: str = "") -> str:
    """Decide a REFUNDED return from the seller's amounts: ``.../refunds``'s
    ``merchant_refund_lines`` as the platform sent them (read strictly here).
    ``judged_digest`` names them as sent, so an errors call is sent only while the
    platform still holds them. Idempotent."""
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
        items, problems = _return_items(refund_lines)
        takes: list[TakeIn] = []
        details: dict[str, dict[str, str]] = defaultdict(dict)
        for label, item in items:
            line = ours.get(label)
            amounts, errors = line_amounts_read(
                item, fields=RETURN_AMOUNT_FIELDS, currency=currency, label=label
            )
            problems += [Problem(e.code, e.message, label) for e in errors]
            principal = amounts["principal_refund_amount"]
            shipping = amounts["shipping_refund_amount"]
            if line is not None:
                # Shown to staff as read; None where it could not be read (never 0.00).
                line.principal_refund_amount = principal
                line.shipping_refund_amount = shipping
                line.save(update_fields=["principal_refund_amount", "shipping_refund_amount"])
            if principal is None or shipping is None:
                continue
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
                details[number] = {
                    "principal_refund_amount": str(principal),
                    "shipping_refund_amount": str(shipping),
                }
        if problems:
            verdict = Verdict(problems=problems)
            line_ids: dict[str, int] = {}
        else:
            costs, line_ids = _costs(
                return_request.order_id,
                {t.mp_line_number for t in takes if t.mp_line_number},
                currency,
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
            return_request.decision = Decision.REFUSED
            return_request.errors, body = _reported(verdict.problems, line_labels=set(ours))
            step_add(
                kind=StepKind.REPORT_RETURN,
                seller_id=return_request.seller_id,
                return_id=return_request.pk,
                body=body,
                judged_digest=judged_digest,
            )
        return_request.save(
            update_fields=["decision", "decided_at", "errors", "status", "updated_at"]
        )
        return return_request.decision


def _return_items(refund_lines: Any) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    """The return's refund lines by their return line number, and what makes the answer
    unusable as a whole: not a list, no lines (a REFUNDED return refunds something), a
    line that is not an object, a return line named twice (it would count twice in the
    ledger but once on the return)."""
    if not isinstance(refund_lines, list):
        return [], [
            Problem(ProblemCode.NO_REFUND_LINES, "the return's refund has no lines (not a list)")
        ]
    if not refund_lines:
        return [], [Problem(ProblemCode.NO_REFUND_LINES, "the return is refunded with no lines")]
    items: list[tuple[str, dict[str, Any]]] = []
    problems: list[Problem] = []
    for index, item in enumerate(refund_lines):
        if not isinstance(item, dict):
            problems.append(
                Problem(ProblemCode.INVALID_AMOUNT, f"refund line {index + 1} is not an object")
            )
            continue
        items.append((str(item.get("mp_return_line_number") or ""), item))
    counts = Counter(label for label, _ in items)
    problems += [
        Problem(
            ProblemCode.DUPLICATE_LINE,
            f"line {label} is named {count} times in the return's refund",
            label,
        )
        for label, count in counts.items()
        if count > 1
    ]
    if any(count > 1 for count in counts.values()):
        items = [(label, item) for label, item in items if counts[label] == 1]
    return items, problems
