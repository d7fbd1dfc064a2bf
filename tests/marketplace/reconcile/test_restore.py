"""The restore test (issue 34): orders, returns and refunds run through the app against the
real sandbox over HTTP; the test database is dumped with ``pg_dump``; work goes on (new
orders, a held order paid and shipped, shipments, completed refunds and returns, payments
made); the dump is restored over the database; ``reconcile --all --after-restore`` runs.
Then every order equals the platform's, the ledger equals the platform's completed refunds
and returns, no refund is paid twice (keys unique, the payments side's paid-out marks
re-applied by key find every row), and the soak's compare (``bench/soak_compare.py``)
finds nothing.

The app's work is driven through its services and real HTTP, without Celery workers:
the push drain, the returns steps' drain and each seller's pull are called in turn
(``_drive``); the sandbox plays the seller through its control calls."""

from __future__ import annotations

import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, connections
from django.test import Client

from bench.soak_compare import after_sale_compare, orders_compare
from marketplace.orders.models import Order
from marketplace.reconcile.models import Finding, FindingAction, ReconcileRun
from marketplace.returns.models import RefundLedgerEntry
from sellers.models import Seller
from tests.marketplace.reconcile.driving import (
    drive,
    intake_order,
    intake_return,
    seller_refunds_line,
    seller_refunds_return,
)
from tests.support.app_fixtures import PLATFORM_SELLER, Platform

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def no_violations(platform: Platform) -> Iterator[None]:
    yield
    violations = platform.sandbox.violations()
    assert violations["total"] == 0, violations


def _payments_side_pays(paid_keys: Path) -> int:
    """The payments side pays every unpaid entry, marks it by key, and keeps the keys."""
    out = io.StringIO()
    call_command("export_unpaid_refunds", stdout=out)
    keys = [row.split(",")[0] for row in out.getvalue().splitlines()[1:]]
    with paid_keys.open("a", encoding="utf-8") as file:
        file.writelines(f"{key}\n" for key in keys)
    batch = paid_keys.with_suffix(".batch")
    batch.write_text("".join(f"{key}\n" for key in keys), encoding="utf-8")
    call_command("mark_refunds_paid_out", "--keys-file", str(batch), stdout=io.StringIO())
    return len(keys)


def _pg(program: str, *args: str) -> None:
    settings = connection.settings_dict
    env = {**os.environ}
    if settings.get("PASSWORD"):
        env["PGPASSWORD"] = str(settings["PASSWORD"])
    command = [program, "-h", str(settings.get("HOST") or "127.0.0.1")]
    command += ["-p", str(settings.get("PORT") or 5432), "-U", str(settings.get("USER"))]
    done = subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr


def _pg_dump(path: Path) -> None:
    _pg("pg_dump", "--format=custom", "--file", str(path), str(connection.settings_dict["NAME"]))


def _pg_restore(path: Path) -> None:
    # Nothing of ours may hold the database while it is replaced.
    connections.close_all()
    name = str(connection.settings_dict["NAME"])
    _pg("pg_restore", "--clean", "--if-exists", "--no-owner", "--dbname", name, str(path))


def _platform_order(platform: Platform, number: str) -> dict[str, Any]:
    return platform.sandbox.order(number)


def test_a_restore_from_a_dump_loses_nothing_and_pays_nothing_twice(
    platform: Platform, connected_seller: Seller, api: Client, tmp_path: Path
) -> None:
    sandbox = platform.sandbox
    seller = connected_seller
    paid_keys = tmp_path / "paid-keys.txt"

    # Before the backup: orders placed and shipped, a held one, a seller's refund and a
    # return completed and paid out.
    for number in ("MP-A1", "MP-A2", "MP-A3"):
        intake_order(api, number)
    intake_order(api, "MP-HELD", state="PENDING")
    drive(seller, rounds=1)
    sandbox.ship("MP-A1")
    sandbox.ship("MP-A2")
    drive(seller)
    assert set(Order.objects.filter(state="SHIPPED").values_list("mp_order_number", flat=True)) == {
        "MP-A1",
        "MP-A2",
    }
    refund_before = seller_refunds_line(platform, "MP-A1", "1", "5.00")
    intake_return(api, "MP-A2", "RET-1", "2")
    drive(seller, rounds=1)
    seller_refunds_return(platform, "MP-A2", "RET-1", 9.99)
    drive(seller)
    assert RefundLedgerEntry.objects.count() == 2
    assert _payments_side_pays(paid_keys) == 2

    dump = tmp_path / "backup.dump"
    _pg_dump(dump)

    # After the backup: new orders (one shipped), the held order paid and shipped, an old
    # one shipped, a refund and a return of a new order completed, and paid out.
    for number in ("MP-B1", "MP-B2"):
        intake_order(api, number)
    state = api.post(
        "/api/intake/orders/MP-HELD/state",
        data=json.dumps({"state": "AWAITING_SHIPMENT"}),
        content_type="application/json",
    )
    assert state.status_code == 200, state.content
    drive(seller, rounds=1)
    for number in ("MP-B1", "MP-HELD", "MP-A3"):
        sandbox.ship(number)
    drive(seller)
    refund_after = seller_refunds_line(platform, "MP-B1", "1", "3.00")
    second_refund_of_a2 = seller_refunds_line(platform, "MP-A2", "1", "2.50")
    intake_return(api, "MP-B1", "RET-2", "2")
    drive(seller, rounds=1)
    seller_refunds_return(platform, "MP-B1", "RET-2", 8.00)
    drive(seller)
    assert RefundLedgerEntry.objects.count() == 5
    assert _payments_side_pays(paid_keys) == 3
    keys_before_restore = set(RefundLedgerEntry.objects.values_list("payment_key", flat=True))

    # The database is restored from the backup: the platform kept everything.
    _pg_restore(dump)
    assert not Order.objects.filter(mp_order_number__in=["MP-B1", "MP-B2"]).exists()
    assert RefundLedgerEntry.objects.count() == 2

    # manage.py reconcile --all --after-restore (workers and beat stopped)
    out = io.StringIO()
    call_command("reconcile", "--all", "--after-restore", stdout=out)
    assert "1 seller(s) reconciled, 0 with an error" in out.getvalue(), out.getvalue()
    run = ReconcileRun.objects.get(seller=seller, after_restore=True)
    # The pass after it finds nothing left to repair.
    following = ReconcileRun.objects.get(seller=seller, after_restore=False)
    assert list(following.findings.values_list("kind", "object_key")) == []
    # The payments side re-applies its marks by key: every key it paid is there again.
    call_command("mark_refunds_paid_out", "--keys-file", str(paid_keys), stdout=io.StringIO())
    # What the workers do once started again (nothing must be pushed or paid twice).
    drive(seller)

    # Every order equals the platform's.
    for order in Order.objects.all():
        theirs = _platform_order(platform, order.mp_order_number)
        assert theirs["marketplace_state"] == order.state, order.mp_order_number
    assert set(Order.objects.values_list("mp_order_number", flat=True)) == {
        "MP-A1",
        "MP-A2",
        "MP-A3",
        "MP-HELD",
        "MP-B1",
        "MP-B2",
    }
    # The ledger equals the platform's completed refunds and returns, each row once, with
    # the keys the payments side paid against, every one marked paid out again.
    ledger = RefundLedgerEntry.objects.all()
    assert set(ledger.values_list("payment_key", flat=True)) == keys_before_restore
    assert ledger.count() == 5
    assert not ledger.filter(paid_out_at__isnull=True).exists()
    assert {
        f"refund:MP-A1:{refund_before}:1",
        f"refund:MP-B1:{refund_after}:1",
        f"refund:MP-A2:{second_refund_of_a2}:1",
        "return:MP-A2:RET-1:2",
        "return:MP-B1:RET-2:2",
    } == keys_before_restore
    # What the restore brought back is on record for staff; nothing is left to them.
    findings = Finding.objects.filter(run=run)
    assert not findings.filter(action=FindingAction.STAFF).exists(), list(
        findings.values("kind", "object_key", "note")
    )
    recorded = findings.filter(action=FindingAction.RECORDED)
    assert sorted(recorded.values_list("kind", "object_key")) == [
        ("restore_order_lost", "MP-B1"),
        ("restore_order_lost", "MP-B2"),
        ("restore_refund_unrecorded", f"MP-A2/refund {second_refund_of_a2}"),
        ("restore_refund_unrecorded", f"MP-B1/refund {refund_after}"),
        ("restore_return_lost", "MP-B1/RET-2"),
        ("restore_return_unrecorded", "MP-B1/RET-2"),
    ]
    caught_up = findings.filter(action=FindingAction.PULL_FORCED)
    assert sorted(caught_up.values_list("object_key", flat=True)) == ["MP-A3", "MP-HELD"]
    # The soak's compare finds nothing.
    orders = orders_compare(sandbox, [PLATFORM_SELLER])
    assert (orders["lost"], orders["duplicated_or_out_of_order"]) == (0, 0), orders
    assert (orders["shipped_quantity_differs"], orders["failures_left"]) == (0, 0), orders
    assert orders["not_synced"] == 0, orders
    money = after_sale_compare(sandbox, [PLATFORM_SELLER])
    assert money["refunds_paid_twice"] == 0, money
    assert money["ledger_mismatch"] == 0, money
    assert money["returns_unfinished"] == 0, money

    # A second pass finds the app level with the platform: nothing recorded again.
    call_command("reconcile", "--all", "--after-restore", stdout=io.StringIO())
    assert (
        list(Finding.objects.exclude(run__in=[run, following]).values_list("kind", "object_key"))
        == []
    )
    assert RefundLedgerEntry.objects.count() == 5
