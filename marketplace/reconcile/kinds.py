"""The kinds of difference a pass can find, one constant each, with what it means.

Plain strings (no database choices): a new kind needs no migration. ``MONEY_KINDS`` are
never repaired by the app: staff see both versions and nothing is paid automatically.
"""

from __future__ import annotations

# --- orders (``compare_orders.py``) ---
# We pushed the order (the platform confirmed it) and the platform does not list it.
ORDER_MISSING = "order_missing"
# The platform holds an older marketplace state than the one we pushed.
ORDER_STATE_BEHIND = "order_state_behind"
# The platform holds a state we never sent (not an older one of ours): both sides moved.
ORDER_STATE_CONFLICT = "order_state_conflict"
# The order's lines differ (SKU, quantity, price): lines never change once placed.
ORDER_LINES_DIFFER = "order_lines_differ"
# The platform shows fulfillments (shipments, cancellations) we have not read.
FULFILLMENT_BEHIND = "fulfillment_behind"

# --- returns (``compare_returns.py``) ---
# A return we placed (its push went through) that the platform does not list.
RETURN_MISSING = "return_missing"
# We marked the return complete; the platform does not show it complete.
RETURN_COMPLETE_BEHIND = "return_complete_behind"
# The platform shows the return further on (authorized, refunded …) than we have read.
RETURN_BEHIND_HERE = "return_behind_here"
# Money: our ledger pays a return the platform does not show refunded or complete, or the
# platform shows a return complete that our ledger does not pay.
RETURN_MONEY = "return_money"

# --- seller refunds (``compare_refunds.py``) ---
# The platform shows a refund ready to decide (new, or corrected) that we have not read.
REFUND_BEHIND_HERE = "refund_behind_here"
# Money: the platform shows a refund COMPLETE that our ledger lacks.
REFUND_NOT_IN_LEDGER = "refund_not_in_ledger"
# Money: our ledger pays a refund the platform does not show COMPLETE.
REFUND_LEDGER_NOT_COMPLETE = "refund_ledger_not_complete"
# Money: the platform's refund lines differ from the ones we decided on.
REFUND_AMOUNTS_DIFFER = "refund_amounts_differ"
# We hold a refund the platform does not list.
REFUND_MISSING_THERE = "refund_missing_there"

# --- listing statuses (``compare_listing_status.py``) ---
# The seller's platform database holds another listing status than the one EDRTS sent last.
LISTING_STATUS_BEHIND = "listing_status_behind"

# --- after a database restore (``after_restore.py``): work the platform holds that we lost ---
RESTORE_ORDER_LOST = "restore_order_lost"
RESTORE_ORDER_BEHIND = "restore_order_behind"
RESTORE_RETURN_LOST = "restore_return_lost"
# Money: recorded once from the platform's record, or left to staff.
RESTORE_RETURN_UNRECORDED = "restore_return_unrecorded"
RESTORE_REFUND_UNRECORDED = "restore_refund_unrecorded"
RESTORE_LEDGER_DIFFERS = "restore_ledger_differs"

KIND_LABELS: dict[str, str] = {
    ORDER_MISSING: "Order missing at the platform",
    ORDER_STATE_BEHIND: "Platform holds an older order state",
    ORDER_STATE_CONFLICT: "Order state differs (both sides moved)",
    ORDER_LINES_DIFFER: "Order lines differ",
    FULFILLMENT_BEHIND: "Fulfillments not read yet",
    RETURN_MISSING: "Return missing at the platform",
    RETURN_COMPLETE_BEHIND: "Return not complete at the platform",
    RETURN_BEHIND_HERE: "Return progress not read yet",
    RETURN_MONEY: "Return money differs from the ledger",
    REFUND_BEHIND_HERE: "Refund to decide not read yet",
    REFUND_NOT_IN_LEDGER: "Refund complete at the platform, not in the ledger",
    REFUND_LEDGER_NOT_COMPLETE: "Refund in the ledger, not complete at the platform",
    REFUND_AMOUNTS_DIFFER: "Refund amounts differ",
    REFUND_MISSING_THERE: "Refund missing at the platform",
    LISTING_STATUS_BEHIND: "Platform holds another listing status than we sent",
    RESTORE_ORDER_LOST: "After a restore: an order we had lost, rebuilt from the platform",
    RESTORE_ORDER_BEHIND: "After a restore: an order we held behind the platform",
    RESTORE_RETURN_LOST: "After a restore: a return we had lost, rebuilt from the platform",
    RESTORE_RETURN_UNRECORDED: "After a restore: a return complete at the platform, "
    "not in the ledger",
    RESTORE_REFUND_UNRECORDED: "After a restore: a refund complete at the platform, "
    "not in the ledger",
    RESTORE_LEDGER_DIFFERS: "After a restore: the ledger holds other amounts than the platform",
}

MONEY_KINDS: frozenset[str] = frozenset(
    {
        RETURN_MONEY,
        REFUND_NOT_IN_LEDGER,
        REFUND_LEDGER_NOT_COMPLETE,
        REFUND_AMOUNTS_DIFFER,
        RESTORE_RETURN_UNRECORDED,
        RESTORE_REFUND_UNRECORDED,
        RESTORE_LEDGER_DIFFERS,
    }
)


def kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind.replace("_", " "))
