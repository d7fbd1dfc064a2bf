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

One path decides both (``_decide``): each side supplies its lines as typed
``MoneyLine`` values (``money_lines.py``: a seller refund's from its stored lines, a
return's from the platform's answer) with the problems found reading them, and a
``_Side`` naming what differs (the excess code, the platform steps, what the errors name).

Amounts are read strictly before any check (``amounts.py``): a refund or return with an
amount that is not a number, missing (null is not zero), out of range or finer than the
currency's minor unit, a REFUNDED return with no refund lines, or a return line named
twice in one answer is refused with its code, never accepted at 0.00. The ledger gets
exactly the amounts decided (no rounding: they are already in the currency's unit).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from marketplace.orders.models import OrderLine
from marketplace.returns.amounts import REFUND_AMOUNT_FIELDS, in_unit
from marketplace.returns.checks import LineCost, Verdict, refund_check
from marketplace.returns.models import (
    Decision,
    RefundLedgerEntry,
    RefundStatus,
    Return,
    ReturnLine,
    ReturnStatus,
    SellerRefund,
    SellerRefundLine,
    StepKind,
)
from marketplace.returns.money import ZERO, line_paid
from marketplace.returns.money_lines import MoneyLine, RefundAmounts, return_refund_lines_read
from marketplace.returns.payment_keys import refund_payment_key, return_payment_key
from marketplace.returns.problems import Problem, platform_code, platform_message
from marketplace.returns.problems import RefundProblemCode as ProblemCode
from marketplace.returns.services.steps import step_add


@dataclass(frozen=True)
class _Side:
    """What differs between deciding a seller's refund and a return's refund: the excess
    code, the platform steps (and the version and lines they belong to), what the errors
    name, and which of the row's fields the decision changes."""

    excess_code: ProblemCode
    complete: StepKind
    report: StepKind
    refund_id: int | None = None
    return_id: int | None = None
    version: int = 1
    complete_digest: str = ""
    report_digest: str = ""
    line_labels: frozenset[str] | None = None
    saved: tuple[str, ...] = ()
    # After a restore: the platform already shows it complete (``after_restore_accept``).
    complete_status: str = ""


class RestoreDisagrees(Exception):
    """After a restore, the platform's completed record does not pass our checks (the
    amounts disagree with what the order and the ledger allow): nothing is written, staff
    settle it."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.code}: {p.message}" for p in problems))
        self.problems = problems


def refund_decide(*, refund_pk: int, after_restore: bool = False) -> str:
    """Decide a seller's refund (idempotent: a decided refund is left as it is).

    ``after_restore``: the platform shows it ``COMPLETE`` and we lost our decision with a
    database restore: accepted from its record (``RestoreDisagrees`` if it does not pass
    the checks), no platform step, marked ``recorded_after_restore``."""
    with transaction.atomic():
        refund = SellerRefund.objects.select_for_update().select_related("order").get(pk=refund_pk)
        if refund.decision:
            return refund.decision
        lines, problems = _refund_lines(refund, list(refund.lines.all()))
        side = _Side(
            excess_code=ProblemCode.EXCESS_ITEM_REFUND,
            complete=StepKind.COMPLETE_REFUND,
            report=StepKind.REPORT_REFUND,
            refund_id=refund.pk,
            version=refund.version,
            complete_digest=refund.lines_digest,
            report_digest=refund.lines_digest,
            complete_status=RefundStatus.COMPLETE if after_restore else "",
        )
        _decide(subject=refund, side=side, lines=lines, problems=problems)
        return refund.decision


def return_decide(
    *, return_pk: int, refund_lines: object, judged_digest: str = "", after_restore: bool = False
) -> str:
    """Decide a REFUNDED return from the seller's amounts: ``.../refunds``'s
    ``merchant_refund_lines`` as the platform sent them (read strictly here).
    ``judged_digest`` names them as sent, so an errors call is sent only while the
    platform still holds them. Idempotent. ``after_restore``: as ``refund_decide``'s (the
    platform shows the return ``COMPLETED``)."""
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
        lines, problems = _return_lines(ours, refund_lines, currency)
        return_request.status = ReturnStatus.REFUNDED
        side = _Side(
            excess_code=ProblemCode.EXCESS_REFUND,
            complete=StepKind.COMPLETE_RETURN,
            report=StepKind.REPORT_RETURN,
            return_id=return_request.pk,
            report_digest=judged_digest,
            line_labels=frozenset(ours),
            saved=("status",),
            complete_status=ReturnStatus.COMPLETED if after_restore else "",
        )
        _decide(subject=return_request, side=side, lines=lines, problems=problems)
        return return_request.decision


def _return_lines(
    ours: dict[str, ReturnLine], refund_lines: object, currency: str
) -> tuple[list[MoneyLine], list[Problem]]:
    """The return's refund lines as ``MoneyLine`` values, read strictly from the
    platform's answer (``money_lines.return_refund_lines_read``), and the problems found.
    Each of our return lines (``ours``, by number) gets the amounts as read, for staff
    (None where one could not be read, never 0.00)."""
    read, problems = return_refund_lines_read(refund_lines, currency=currency)
    lines: list[MoneyLine] = []
    for item in read:
        line = ours.get(item.label)
        if line is not None:
            line.principal_refund_amount = item.principal_refund_amount
            line.shipping_refund_amount = item.shipping_refund_amount
            line.save(update_fields=["principal_refund_amount", "shipping_refund_amount"])
        if item.amounts is not None:
            lines.append(
                MoneyLine(
                    label=item.label,
                    mp_line_number=line.order_line.mp_line_number if line else "",
                    currency=currency,
                    amounts=item.amounts,
                )
            )
    return lines, problems


def _refund_lines(
    refund: SellerRefund, rows: list[SellerRefundLine]
) -> tuple[list[MoneyLine], list[Problem]]:
    """The refund's stored lines as ``MoneyLine`` values, and what makes the refund
    impossible to check: amounts the pull could not read (its ``read_problems``), a stored
    amount finer than the order currency's unit (rows stored before the strict reading:
    refused, never rounded), and no lines at all. Two lines on one order line are not
    among them: the platform lists a v2 refund's lines for one order line as separate v1
    lines (their sum is what the refund takes, and the ledger's one row for the line)."""
    problems = [
        Problem(str(p.get("code") or ""), str(p.get("message") or ""), str(p.get("label") or ""))
        for p in refund.read_problems or []
        if isinstance(p, dict)
    ]
    named = {p.label for p in problems}
    currency = refund.order.currency
    lines: list[MoneyLine] = []
    for row in rows:
        if not row.readable:
            if row.mp_line_number not in named:
                problems.append(
                    Problem(
                        ProblemCode.MISSING_AMOUNT,
                        f"line {row.mp_line_number}: an amount could not be read",
                        row.mp_line_number,
                    )
                )
            continue
        amounts: dict[str, Decimal] = {}
        for name in REFUND_AMOUNT_FIELDS:
            value = getattr(row, name)
            try:
                amounts[name] = in_unit(value, currency)
            except ValueError as exc:
                problems.append(
                    Problem(
                        getattr(exc, "code", ProblemCode.AMOUNT_TOO_PRECISE),
                        f"line {row.mp_line_number} {name}: {value} is not a whole number "
                        f"of {currency} minor units",
                        row.mp_line_number,
                    )
                )
        if len(amounts) == len(REFUND_AMOUNT_FIELDS):
            lines.append(
                MoneyLine(
                    label=row.mp_line_number,
                    mp_line_number=row.mp_line_number if row.order_line_id else "",
                    currency=row.currency,
                    amounts=RefundAmounts(**amounts),
                    quantity=row.refund_quantity,
                )
            )
    if not rows:
        problems.append(Problem(ProblemCode.NO_REFUND_LINES, "the refund has no lines"))
    return lines, problems


def _decide(
    *,
    subject: SellerRefund | Return,
    side: _Side,
    lines: Sequence[MoneyLine],
    problems: list[Problem],
) -> None:
    """The one decision of both: refuse with ``problems`` (what could not be read) when
    there are any, else check ``lines`` against the locked order lines and the ledger;
    accepted → the ledger rows and the complete step, refused → the errors and their step.
    Call inside the transaction that holds ``subject``'s row lock."""
    currency = subject.order.currency
    line_ids: dict[str, int] = {}
    if problems:
        verdict = Verdict(problems=problems)
    else:
        numbers = {line.mp_line_number for line in lines if line.mp_line_number}
        costs, line_ids = _costs(subject.order_id, numbers, currency)
        verdict = refund_check(
            lines=lines, costs=costs, currency=currency, excess_code=side.excess_code
        )
    if side.complete_status:
        _after_restore_accept(
            subject=subject, side=side, verdict=verdict, lines=lines, ids=line_ids
        )
        return
    subject.decided_at = timezone.now()
    if verdict.accepted:
        subject.decision = Decision.ACCEPTED
        _ledger_write(
            subject=subject,
            side=side,
            verdict=verdict,
            lines=lines,
            line_ids=line_ids,
            order_id=subject.order_id,
            currency=currency,
        )
        step_add(
            kind=side.complete,
            seller_id=subject.seller_id,
            refund_id=side.refund_id,
            return_id=side.return_id,
            version=side.version,
            judged_digest=side.complete_digest,
        )
    else:
        subject.decision = Decision.REFUSED
        subject.errors, body = _reported(verdict.problems, line_labels=side.line_labels)
        step_add(
            kind=side.report,
            seller_id=subject.seller_id,
            refund_id=side.refund_id,
            return_id=side.return_id,
            body=body,
            version=side.version,
            judged_digest=side.report_digest,
        )
    subject.save(update_fields=["decision", "decided_at", "errors", *side.saved, "updated_at"])


def _after_restore_accept(
    *,
    subject: SellerRefund | Return,
    side: _Side,
    verdict: Verdict,
    lines: Sequence[MoneyLine],
    ids: dict[str, int],
) -> None:
    """Accept what the platform already shows complete, from its record: the ledger rows
    (never a second row for a key already there: the caller checked, the unique key
    refuses), the platform's state, no step (no call is due: it is complete there)."""
    if not verdict.accepted:
        raise RestoreDisagrees(verdict.problems)
    subject.decided_at = timezone.now()
    subject.decision = Decision.ACCEPTED
    subject.recorded_after_restore = True
    subject.status = side.complete_status
    _ledger_write(
        subject=subject,
        side=side,
        verdict=verdict,
        lines=lines,
        line_ids=ids,
        order_id=subject.order_id,
        currency=subject.order.currency,
    )
    subject.save(
        update_fields=[
            "decision",
            "decided_at",
            "status",
            "recorded_after_restore",
            "updated_at",
        ]
    )


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
    subject: SellerRefund | Return,
    side: _Side,
    verdict: Verdict,
    lines: Sequence[MoneyLine],
    line_ids: dict[str, int],
    order_id: int,
    currency: str,
) -> None:
    """One row per order line the decision takes from: exactly the amount decided, with
    its parts (summed over the decision's lines on that order line) for people."""
    details: dict[str, dict[str, Decimal]] = defaultdict(dict)
    for line in lines:
        part = details[line.mp_line_number]
        for name, value in line.parts().items():
            part[name] = part.get(name, ZERO) + value
    RefundLedgerEntry.objects.bulk_create(
        RefundLedgerEntry(
            order_id=order_id,
            order_line_id=line_ids[number],
            refund_id=side.refund_id,
            return_request_id=side.return_id,
            currency=currency,
            amount=amount,
            payment_key=_payment_key(subject, number),
            detail={
                name: str(in_unit(value, currency))
                for name, value in details.get(number, {}).items()
            },
        )
        for number, amount in sorted(verdict.takes.items())
    )


def _payment_key(subject: SellerRefund | Return, mp_line_number: str) -> str:
    if isinstance(subject, SellerRefund):
        return refund_payment_key(
            mp_order_number=subject.order.mp_order_number,
            refund_id=subject.refund_id,
            mp_line_number=mp_line_number,
        )
    return return_payment_key(
        mp_order_number=subject.order.mp_order_number,
        mp_return_number=subject.mp_return_number,
        mp_line_number=mp_line_number,
    )


def _reported(
    problems: list[Problem], *, line_labels: frozenset[str] | None = None
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
