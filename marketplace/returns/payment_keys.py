"""The stable key of a refund ledger row: what the payments side pays against.

Derived only from the platform's names (the order, the platform's refund id or our
return's number, the order line), never from our row ids, so a row rebuilt after a
database restore (``marketplace/reconcile/after_restore.py``) has the key of the row the
payments side already paid, and the paid-out marks are re-applied by key
(``manage.py mark_refunds_paid_out --keys-file``): a payment made before a restore is
never made twice.

* a seller's refund: ``refund:<mp_order_number>:<feedamp_refund_id>:<mp_line_number>``
* a return's refund: ``return:<mp_order_number>:<mp_return_number>:<mp_line_number>``
* a reversing entry: ``reversal:<key of the entry it reverses>``

Each source is written once per order line (the ledger's constraints), so the key is
unique; the column's unique index refuses a second row for a key already there (a
rebuild after a restore, a repeat) rather than paying it twice.
"""

from __future__ import annotations

# mp_order_number, a return's number and a line's number are each at most 128 characters.
PAYMENT_KEY_MAX_LENGTH = 512


def refund_payment_key(*, mp_order_number: str, refund_id: str, mp_line_number: str) -> str:
    return f"refund:{mp_order_number}:{refund_id}:{mp_line_number}"


def return_payment_key(*, mp_order_number: str, mp_return_number: str, mp_line_number: str) -> str:
    return f"return:{mp_order_number}:{mp_return_number}:{mp_line_number}"


def reversal_payment_key(key: str) -> str:
    return f"reversal:{key}"
