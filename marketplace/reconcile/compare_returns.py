"""Each return of ours in a pass against the platform's: its state, and its money against
our ledger. Money is never repaired: a difference there goes to staff, both versions."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from marketplace.reconcile import kinds
from marketplace.reconcile.after_sale_ours import AfterSaleOurs
from marketplace.reconcile.models import FindingAction
from marketplace.reconcile.pass_state import PassState
from marketplace.reconcile.repairs import return_reread_mark, step_send_again
from marketplace.returns.models import Return, ReturnStatus, StepKind, StepStatus

# How far along a return is; REJECTED (reading B) ends it as COMPLETED does.
RETURN_RANK: dict[str, int] = {
    ReturnStatus.AWAITING_AUTHORIZATION: 0,
    ReturnStatus.AUTHORIZED: 1,
    ReturnStatus.REFUNDED: 2,
    ReturnStatus.COMPLETED: 3,
    ReturnStatus.REJECTED: 3,
}
# The platform's states in which a return's refund is owed to the buyer.
PAID_STATES = (ReturnStatus.REFUNDED, ReturnStatus.COMPLETED)


def _ours(return_request: Return, paid: Decimal) -> dict[str, Any]:
    return {
        "status": return_request.status,
        "decision": return_request.decision,
        "rma": return_request.rma,
        "ledger": str(paid),
    }


def _theirs(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        key: entry.get(key) for key in ("status", "rma", "return_lines", "notes") if key in entry
    }


def return_compare(state: PassState, ours: AfterSaleOurs, return_request: Return) -> None:
    """One return of ours (``ours``: its ledger total and steps, read once for the pass)."""
    state.count("returns")
    number = return_request.order.mp_order_number
    key = f"{number}/{return_request.mp_return_number}"
    entry = state.side.returns.get((number, return_request.mp_return_number))
    paid = ours.paid_for_return(return_request.pk)
    if entry is None:
        push = ours.return_step(return_request.pk, StepKind.PUSH_RETURN)
        if push is not None and push.status == StepStatus.DONE and step_send_again(step=push):
            state.record(
                kind=kinds.RETURN_MISSING,
                object_type="return",
                object_key=key,
                ours=_ours(return_request, paid),
                theirs={},
                action=FindingAction.RESENT,
                note="the platform does not list it: its push is sent again",
            )
        return
    theirs = str(entry.get("status") or "")
    if _money_differs(state, return_request, key, theirs, paid, entry):
        return
    ours_rank = RETURN_RANK.get(return_request.status, 0)
    theirs_rank = RETURN_RANK.get(theirs)
    if theirs_rank is not None and theirs_rank > ours_rank:
        state.record(
            kind=kinds.RETURN_BEHIND_HERE,
            object_type="return",
            object_key=key,
            ours=_ours(return_request, paid),
            theirs=_theirs(entry),
            action=FindingAction.PULL_FORCED,
            note=f"the platform shows {theirs}: the next pull reads it",
        )
        return_reread_mark(
            seller_id=return_request.seller_id,
            mp_return_number=return_request.mp_return_number,
            mp_order_number=number,
        )
        state.pull_due_now = True
        return
    if return_request.status == ReturnStatus.COMPLETED and theirs == ReturnStatus.REFUNDED:
        complete = ours.return_step(return_request.pk, StepKind.COMPLETE_RETURN)
        done = complete is not None and complete.status == StepStatus.DONE
        if done and complete is not None and step_send_again(step=complete):
            state.record(
                kind=kinds.RETURN_COMPLETE_BEHIND,
                object_type="return",
                object_key=key,
                ours=_ours(return_request, paid),
                theirs=_theirs(entry),
                action=FindingAction.RESENT,
                note="we marked it complete: the call is sent again",
            )


def _money_differs(
    state: PassState,
    return_request: Return,
    key: str,
    theirs: str,
    paid: Decimal,
    entry: dict[str, Any],
) -> bool:
    """Our ledger pays a return the platform does not show refunded, or the platform shows
    it complete and our ledger pays nothing: staff, both versions."""
    if paid > 0 and theirs not in PAID_STATES:
        note = f"our ledger pays {paid} for a return the platform shows {theirs}"
    elif theirs == ReturnStatus.COMPLETED and paid <= 0:
        note = "the platform shows it complete; our ledger pays nothing for it"
    else:
        return False
    state.record(
        kind=kinds.RETURN_MONEY,
        object_type="return",
        object_key=key,
        ours=_ours(return_request, paid),
        theirs=_theirs(entry),
        action=FindingAction.STAFF,
        note=note + " (nothing paid automatically)",
    )
    return True
