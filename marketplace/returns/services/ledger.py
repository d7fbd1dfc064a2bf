"""The payments side's one step on the ledger: an entry is paid out.

The marketplace's payments system pays the buyer and then marks the entry (the admin's
"Mark paid out" action, or ``manage.py mark_refunds_paid_out``). Marking is a
conditional update: an entry is marked once, whoever marks it again changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone

from marketplace.returns.models import RefundLedgerEntry


def ledger_mark_paid_out(*, entry_ids: Iterable[int], actor: str) -> int:
    """Mark these entries paid out (those not paid yet); returns how many were marked."""
    return RefundLedgerEntry.objects.filter(
        pk__in=list(entry_ids), paid_out_at__isnull=True
    ).update(paid_out_at=timezone.now(), paid_out_by=actor[:150])
