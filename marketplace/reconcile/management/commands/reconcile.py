"""``manage.py reconcile [--seller SELLER ...] [--all]``: a reconciliation pass now, in this
process, printing what each pass compared and found.

``--seller`` takes a seller's id, their sign-in username or their platform username;
``--all`` passes every seller with open work (a seller with nothing open costs no
platform call and is not listed).

``--after-restore [--since ISO]``: after the database was restored from a backup (README
"Backups and restore"), first the after-restore pass (``after_restore.py``: orders and
returns we lost rebuilt from the platform's record, completed refunds and returns
recorded in the ledger once), then the pass above; ``--all`` then takes every seller
that ever connected. ``--since`` (ISO 8601 with a zone): the backup's time, when the
latest order we hold is no good guess of it.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q
from django.utils.dateparse import parse_datetime

from marketplace.reconcile.after_restore import (
    seller_reconcile_after_restore,
    sellers_to_reconcile_after_restore,
)
from marketplace.reconcile.kinds import kind_label
from marketplace.reconcile.models import ReconcileRun, RunTrigger
from marketplace.reconcile.schedule import sellers_with_open_work
from marketplace.reconcile.seller_pass import NOT_CONNECTED, SKIPPED_LEASE_HELD, seller_reconcile
from sellers.models import Seller


def _since(value: str) -> datetime:
    moment = parse_datetime(value)
    if moment is None or moment.tzinfo is None:
        raise argparse.ArgumentTypeError(
            f"{value!r}: an ISO 8601 date-time with a zone, e.g. 2026-11-27T02:00:00Z"
        )
    return moment


def _seller(name: str) -> Seller:
    query = Q(user__username=name) | Q(platform_username=name)
    if name.isdigit():
        query |= Q(pk=int(name))
    found = list(Seller.objects.filter(query)[:2])
    if len(found) != 1:
        raise CommandError(f"{name!r}: {'no' if not found else 'more than one'} such seller")
    return found[0]


# A pass that did not run (a pull held the lease, the seller is not connected) is printed,
# not counted as a failure: only a platform that refused or failed is.
NOT_FAILURES = (SKIPPED_LEASE_HELD, NOT_CONNECTED)


class Command(BaseCommand):
    help = "Reconcile sellers with the platform now and print the findings."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--seller",
            action="append",
            default=[],
            metavar="SELLER",
            help="a seller's id or username (repeat for several)",
        )
        parser.add_argument("--all", action="store_true", help="every seller with open work")
        parser.add_argument(
            "--after-restore",
            action="store_true",
            help="after a database restore: first bring back what the platform holds that "
            "we lost (--all: every seller that ever connected)",
        )
        parser.add_argument(
            "--since",
            type=_since,
            help="with --after-restore: the backup's time (ISO 8601 with a zone); default: "
            "the latest order held less a margin",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        names: list[str] = options["seller"]
        if not names and not options["all"]:
            raise CommandError("name a seller (--seller) or pass --all")
        ids = [_seller(name).pk for name in names]
        after_restore: bool = options["after_restore"]
        if options["since"] and not after_restore:
            raise CommandError("--since goes with --after-restore")
        if options["all"]:
            everyone = sellers_to_reconcile_after_restore() if after_restore else None
            ids += sorted(set(everyone or sellers_with_open_work()) - set(ids))
        failed = 0
        for seller_id in ids:
            if after_restore:
                restored = seller_reconcile_after_restore(
                    seller_id=seller_id,
                    since=options["since"],
                    trigger=RunTrigger.COMMAND,
                    actor="manage.py reconcile --after-restore",
                )
                failed += int(bool(restored.error))
                self._print(restored)
            run = seller_reconcile(seller_id=seller_id, trigger=RunTrigger.COMMAND)
            failed += int(bool(run.error) and run.error not in NOT_FAILURES)
            self._print(run)
        self.stdout.write(f"{len(ids)} seller(s) reconciled, {failed} with an error")
        if failed:
            raise CommandError(f"{failed} pass(es) ended with an error")

    def _print(self, run: ReconcileRun) -> None:
        compared = (
            ", ".join(f"{n} {what}" for what, n in sorted(run.compared.items())) or "nothing open"
        )
        self.stdout.write(
            f"seller {run.seller_id}{' (after restore)' if run.after_restore else ''}: "
            f"{compared}; {run.platform_calls} platform call(s); "
            f"{run.findings_count} finding(s){'; error: ' + run.error if run.error else ''}"
        )
        for finding in run.findings.order_by("id"):
            self.stdout.write(
                f"  {kind_label(finding.kind)} · {finding.object_type} {finding.object_key} · "
                f"{finding.get_action_display()}: {finding.note}"
            )
