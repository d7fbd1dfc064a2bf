"""Our side of a pass's returns and refunds beyond the rows themselves, read once for all
of them: what our ledger pays for each (reversals included), the platform steps of each
return, and the refunds whose ``complete`` call is on its way. A handful of queries a
pass, whatever the number of returns and refunds in scope (not one or two per object).

Read after the platform's side, right before the comparisons: a compare repairs only its
own object (``repairs.py``), so nothing read here is changed by another compare.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Sum

from marketplace.returns.models import PlatformStep, RefundLedgerEntry, StepKind, StepStatus

# The steps of a return a compare looks at (sent again when the platform lacks them).
RETURN_STEP_KINDS = (StepKind.PUSH_RETURN, StepKind.COMPLETE_RETURN)
OPEN_STEP = (StepStatus.PENDING, StepStatus.RETRYING)


@dataclass
class AfterSaleOurs:
    """Keyed by our row ids (``Return.pk``, ``SellerRefund.pk``)."""

    return_paid: dict[int, Decimal] = field(default_factory=dict)
    refund_paid: dict[int, Decimal] = field(default_factory=dict)
    return_steps: dict[tuple[int, str], PlatformStep] = field(default_factory=dict)
    refunds_completing: set[int] = field(default_factory=set)

    def paid_for_return(self, return_id: int) -> Decimal:
        return self.return_paid.get(return_id, Decimal(0))

    def paid_for_refund(self, refund_id: int) -> Decimal:
        return self.refund_paid.get(refund_id, Decimal(0))

    def return_step(self, return_id: int, kind: str) -> PlatformStep | None:
        return self.return_steps.get((return_id, kind))

    def complete_in_flight(self, refund_id: int) -> bool:
        """Our ``complete`` call of this refund is on its way (not yet at the platform)."""
        return refund_id in self.refunds_completing


def _ledger_totals(source: str, ids: Collection[int]) -> dict[int, Decimal]:
    """What our ledger pays for each of ``ids`` (``source``: the entry's column naming the
    return or the refund), reversals included; one grouped query."""
    totals = (
        RefundLedgerEntry.objects.filter(**{f"{source}__in": ids})
        .order_by()
        .values_list(source)
        .annotate(total=Sum("amount"))
    )
    return {key: Decimal(total or 0) for key, total in totals}


def after_sale_ours_read(
    *, return_ids: Collection[int], refund_ids: Collection[int]
) -> AfterSaleOurs:
    """One grouped query each: ledger totals by return, by refund; the returns' steps; the
    refunds with a ``complete`` call pending. The ids are the rows the pass already holds."""
    ours = AfterSaleOurs()
    if return_ids:
        ours.return_paid = _ledger_totals("return_request_id", return_ids)
        steps = PlatformStep.objects.filter(
            return_request_id__in=return_ids, kind__in=RETURN_STEP_KINDS
        ).order_by("id")
        for step in steps:
            # One step per kind and return (``step_once_per_return``): the first by id, as
            # a lookup of its own would read it.
            ours.return_steps.setdefault((step.return_request_id or 0, step.kind), step)
    if refund_ids:
        ours.refund_paid = _ledger_totals("refund_id", refund_ids)
        ours.refunds_completing = set(
            PlatformStep.objects.filter(
                refund_id__in=refund_ids, kind=StepKind.COMPLETE_REFUND, status__in=OPEN_STEP
            ).values_list("refund_id", flat=True)
        )
    return ours
