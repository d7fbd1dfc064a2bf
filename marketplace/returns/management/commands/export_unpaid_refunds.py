"""Export the ledger entries not paid out yet, as CSV, for the payments side: one row per
entry, keyed by ``payment_key`` (what it pays against and marks paid out by)."""

from __future__ import annotations

import csv
from typing import Any

from django.core.management.base import BaseCommand

from marketplace.returns.models import RefundLedgerEntry

COLUMNS = ("payment_key", "mp_order_number", "mp_line_number", "currency", "amount", "created_at")


class Command(BaseCommand):
    help = "Print the ledger entries not yet paid out as CSV (payment_key first)."

    def handle(self, *args: Any, **options: Any) -> None:
        writer = csv.writer(self.stdout, lineterminator="\n")
        writer.writerow(COLUMNS)
        entries = (
            RefundLedgerEntry.objects.filter(paid_out_at__isnull=True)
            .select_related("order", "order_line")
            .order_by("created_at", "id")
        )
        for entry in entries.iterator():
            writer.writerow(
                (
                    entry.payment_key,
                    entry.order.mp_order_number,
                    entry.order_line.mp_line_number,
                    entry.currency,
                    entry.amount_in_unit,
                    entry.created_at.isoformat(),
                )
            )
