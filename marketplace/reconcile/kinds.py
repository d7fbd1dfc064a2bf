"""The kinds of difference a pass can find, one constant each, with what it means.

Plain strings (no database choices): a new kind needs no migration. ``MONEY_KINDS`` are
never repaired by the app: staff see both versions and nothing is paid automatically.
"""

from __future__ import annotations

# Added by the rooms that find them (orders, returns and refunds, listing status).
KIND_LABELS: dict[str, str] = {}

MONEY_KINDS: frozenset[str] = frozenset()

# After a database restore (``after_restore.py``): work the platform holds that we lost.
RESTORE_ORDER_LOST = "restore_order_lost"
RESTORE_ORDER_BEHIND = "restore_order_behind"
RESTORE_RETURN_LOST = "restore_return_lost"
RESTORE_RETURN_UNRECORDED = "restore_return_unrecorded"
RESTORE_REFUND_UNRECORDED = "restore_refund_unrecorded"
RESTORE_LEDGER_DIFFERS = "restore_ledger_differs"

KIND_LABELS.update(
    {
        RESTORE_ORDER_LOST: "After a restore: an order the platform holds and we had lost",
        RESTORE_ORDER_BEHIND: "After a restore: an order we held behind the platform",
        RESTORE_RETURN_LOST: "After a restore: a return the platform holds and we had lost",
        RESTORE_RETURN_UNRECORDED: "After a restore: a return the platform shows completed, "
        "missing from our ledger",
        RESTORE_REFUND_UNRECORDED: "After a restore: a refund the platform shows complete, "
        "missing from our ledger",
        RESTORE_LEDGER_DIFFERS: "After a restore: the ledger holds other amounts than the "
        "platform shows",
    }
)
RESTORE_MONEY_KINDS = frozenset(
    {RESTORE_RETURN_UNRECORDED, RESTORE_REFUND_UNRECORDED, RESTORE_LEDGER_DIFFERS}
)
