"""Mark refund ledger entries paid out (the payments side, after paying the buyer).

By ``payment_key`` (what the payments side pays against: ``--key`` or ``--keys-file``,
one key a line, ``-`` for stdin) or by entry id. After a database restore the payments
side re-applies every mark it made by key: a rebuilt row has the key of the row it paid.
Keys the ledger does not hold are listed on stderr and the command exits with status 3:
run the after-restore reconciliation (``manage.py reconcile --all --after-restore``)
first, then apply them again.

Each run is logged in the money log (``MoneyAction``) under ``--actor``; an entry is
marked once (the ledger's trigger lets ``paid_out_at`` be set from empty, never again)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from marketplace.returns.models import RefundLedgerEntry
from marketplace.returns.services.ledger import ledger_keys_missing, ledger_mark_paid_out

MISSING_KEYS_EXIT = 3


def _keys_read(path: str) -> list[str]:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


class Command(BaseCommand):
    help = (
        "Mark refund ledger entries paid out: by payment key (--key, --keys-file), "
        "by id, or --all not yet paid."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="*", type=int, help="ledger entry ids")
        parser.add_argument(
            "--key", action="append", default=[], dest="keys", help="a payment key (repeatable)"
        )
        parser.add_argument(
            "--keys-file", help="a file of payment keys, one a line ('-': standard input)"
        )
        parser.add_argument("--all", action="store_true", help="every entry not yet paid out")
        parser.add_argument(
            "--actor", default="payments", help="who marks them (kept in the money log)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        ids: list[int] = options["ids"]
        keys: list[str] = list(options["keys"])
        if options["keys_file"]:
            try:
                keys += _keys_read(options["keys_file"])
            except OSError as exc:
                raise CommandError(f"cannot read {options['keys_file']}: {exc}") from exc
        if options["all"]:
            ids = list(
                RefundLedgerEntry.objects.filter(paid_out_at__isnull=True).values_list(
                    "pk", flat=True
                )
            )
        marked = ledger_mark_paid_out(entry_ids=ids, payment_keys=keys, actor=options["actor"])
        self.stdout.write(f"{marked} ledger entries marked paid out")
        missing = ledger_keys_missing(payment_keys=keys)
        if missing:
            listed = "\n".join(f"  {key}" for key in missing)
            raise CommandError(
                f"{len(missing)} keys are not in the ledger (nothing marked for them):\n{listed}",
                returncode=MISSING_KEYS_EXIT,
            )
