"""Reverse a refund ledger entry: a new entry of the opposite amount, with the reason and
who did it (the ledger is append-only; this is how a wrong entry is corrected)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from marketplace.returns.models import RefundLedgerEntry
from marketplace.returns.services.ledger import LedgerRefused, ledger_reverse


class Command(BaseCommand):
    help = "Reverse a refund ledger entry with a new, opposite entry (logged: who, when, why)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("entry_id", type=int)
        parser.add_argument("--reason", required=True, help="why the entry is reversed")
        parser.add_argument("--actor", required=True, help="the staff user reversing it")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            reversal = ledger_reverse(
                entry_id=options["entry_id"], actor=options["actor"], reason=options["reason"]
            )
        except RefundLedgerEntry.DoesNotExist as exc:
            raise CommandError(f"no ledger entry {options['entry_id']}") from exc
        except LedgerRefused as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"entry {options['entry_id']} reversed by entry {reversal.pk} "
            f"({reversal.amount_in_unit} {reversal.currency})"
        )
