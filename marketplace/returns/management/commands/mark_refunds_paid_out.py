"""Mark refund ledger entries paid out (the payments side, after paying the buyer).

Each run is logged in the money log (``MoneyAction``) under ``--actor``; an entry is
marked once (the ledger's trigger lets ``paid_out_at`` be set from empty, never again)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from marketplace.returns.models import RefundLedgerEntry
from marketplace.returns.services.ledger import ledger_mark_paid_out


class Command(BaseCommand):
    help = "Mark refund ledger entries paid out: the given ids, or --all not yet paid."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="*", type=int)
        parser.add_argument("--all", action="store_true", help="every entry not yet paid out")
        parser.add_argument(
            "--actor", default="payments", help="who marks them (kept in the money log)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ids: list[int] = options["ids"]
        if options["all"]:
            ids = list(
                RefundLedgerEntry.objects.filter(paid_out_at__isnull=True).values_list(
                    "pk", flat=True
                )
            )
        marked = ledger_mark_paid_out(entry_ids=ids, actor=options["actor"])
        self.stdout.write(f"{marked} ledger entries marked paid out")
