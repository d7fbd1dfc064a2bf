"""Each seller refund of a pass, ours and the platform's (every status), against our
ledger. Only one thing is repaired: a refund the platform shows ready to decide that we
have not read (the next pull lists it). Everything about money goes to staff."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from marketplace.reconcile import kinds
from marketplace.reconcile.after_sale_ours import AfterSaleOurs
from marketplace.reconcile.models import FindingAction
from marketplace.reconcile.pass_state import PassState
from marketplace.returns.models import RefundStatus, SellerRefund
from marketplace.returns.services.refund_versions import lines_digest


def _ours(refund: SellerRefund | None, paid: Decimal) -> dict[str, Any]:
    if refund is None:
        return {"ledger": str(paid)}
    return {
        "status": refund.status,
        "decision": refund.decision,
        "version": refund.version,
        "lines": [
            {
                "mp_line_number": line.mp_line_number,
                "item_refund": str(line.item_refund),
                "item_tax_refund": str(line.item_tax_refund),
                "shipping_refund": str(line.shipping_refund),
                "shipping_tax_refund": str(line.shipping_tax_refund),
                "discount_refund": str(line.discount_refund),
            }
            for line in refund.lines.all()
        ],
        "ledger": str(paid),
    }


def _theirs(entry: dict[str, Any]) -> dict[str, Any]:
    keys = ("status", "date_created", "merchant_refund_lines", "errors")
    return {key: entry.get(key) for key in keys if key in entry}


def refund_compare(
    state: PassState,
    ours: AfterSaleOurs,
    refund_id: str,
    entry: dict[str, Any],
    refund: SellerRefund | None,
) -> None:
    """One refund the platform lists on an order of ours (``refund``: ours, if we hold it;
    ``ours``: the ledger totals and steps, read once for the pass)."""
    state.count("refunds")
    key = f"{entry.get('mp_order_number')}/refund {refund_id}"
    theirs = str(entry.get("status") or "")
    paid = ours.paid_for_refund(refund.pk) if refund is not None else Decimal(0)
    same_lines = refund is not None and refund.lines_digest == lines_digest(entry)

    def staff(kind: str, note: str) -> None:
        state.record(
            kind=kind,
            object_type="refund",
            object_key=key,
            ours=_ours(refund, paid),
            theirs=_theirs(entry),
            action=FindingAction.STAFF,
            note=note + " (nothing paid automatically)",
        )

    if theirs == RefundStatus.COMPLETE:
        if paid <= 0:
            staff(kinds.REFUND_NOT_IN_LEDGER, "the platform shows it complete; our ledger lacks it")
        elif not same_lines:
            staff(kinds.REFUND_AMOUNTS_DIFFER, "the platform's lines differ from those we paid")
        return
    if paid > 0:
        if refund is not None and ours.complete_in_flight(refund.pk):
            return  # our complete call is on its way
        if not same_lines:
            staff(kinds.REFUND_AMOUNTS_DIFFER, "the platform's lines differ from those we paid")
        else:
            staff(
                kinds.REFUND_LEDGER_NOT_COMPLETE,
                f"our ledger pays {paid}; the platform shows it {theirs}",
            )
        return
    corrected = refund is not None and refund.status == RefundStatus.PAUSED
    if theirs == RefundStatus.CREATED and (not same_lines or corrected):
        state.record(
            kind=kinds.REFUND_BEHIND_HERE,
            object_type="refund",
            object_key=key,
            ours=_ours(refund, paid),
            theirs=_theirs(entry),
            action=FindingAction.PULL_FORCED,
            note="ready to decide at the platform: the next pull reads it",
        )
        state.pull_due_now = True


def refund_missing_there(state: PassState, ours: AfterSaleOurs, refund: SellerRefund) -> None:
    """A refund we hold on an order we listed, which the platform does not list."""
    state.count("refunds")
    paid = ours.paid_for_refund(refund.pk)
    state.record(
        kind=kinds.REFUND_MISSING_THERE,
        object_type="refund",
        object_key=f"{refund.order.mp_order_number}/refund {refund.refund_id}",
        ours=_ours(refund, paid),
        theirs={},
        action=FindingAction.STAFF,
        note="the platform does not list this refund",
    )
