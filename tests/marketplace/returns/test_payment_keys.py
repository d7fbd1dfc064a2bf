"""Every ledger row has a stable ``payment_key`` derived from the platform's refund or
return and the line; the payments side marks paid out by it (after a restore it re-applies
its marks from a file of keys), exports show it, and the database keeps it unique and
unchangeable. Rows written before the key existed get theirs from the migration."""

from __future__ import annotations

import io
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from marketplace.returns.models import Decision, MoneyAction, RefundLedgerEntry
from marketplace.returns.services.decide import refund_decide, return_decide
from marketplace.returns.services.ledger import ledger_mark_paid_out, ledger_reverse
from tests.marketplace.returns.conftest import shipped_order
from tests.marketplace.returns.test_money import new_refund, new_return

D = Decimal
LEDGER = "returns_refundledgerentry"


def _refund_entry(number: str = "MP-K1", refund_id: str = "71") -> RefundLedgerEntry:
    order = shipped_order(number=number)
    assert refund_decide(refund_pk=new_refund(order, refund_id, {"item": "5.00"}).pk) == (
        Decision.ACCEPTED
    )
    return RefundLedgerEntry.objects.get(order=order)


@pytest.mark.django_db
def test_a_refunds_entry_is_keyed_by_order_refund_and_line(wakes: list[str]) -> None:
    entry = _refund_entry()

    assert entry.payment_key == "refund:MP-K1:71:1"


@pytest.mark.django_db
def test_a_returns_entry_is_keyed_by_order_return_and_line(wakes: list[str]) -> None:
    order = shipped_order(number="MP-K2")
    ret = new_return(order, "RET-9")
    lines = [{"mp_return_line_number": "1", "principal_refund_amount": "9.20"}]
    lines[0]["shipping_refund_amount"] = "0.80"

    assert return_decide(return_pk=ret.pk, refund_lines=lines) == Decision.ACCEPTED

    assert RefundLedgerEntry.objects.get().payment_key == "return:MP-K2:RET-9:1"


@pytest.mark.django_db
def test_a_reversal_is_keyed_by_the_entry_it_reverses(wakes: list[str]) -> None:
    entry = _refund_entry()

    reversal = ledger_reverse(entry_id=entry.pk, actor="staff", reason="paid by hand")

    assert reversal.payment_key == "reversal:refund:MP-K1:71:1"


@pytest.mark.django_db
def test_a_second_row_with_a_key_already_there_is_refused(wakes: list[str]) -> None:
    entry = _refund_entry()
    other = shipped_order(number="MP-K3")
    refund = new_refund(other, "72", {"item": "1.00"})

    with pytest.raises(IntegrityError), transaction.atomic():
        RefundLedgerEntry.objects.create(
            order=other,
            order_line=other.lines.get(),
            refund=refund,
            currency="EUR",
            amount=D("1.00"),
            payment_key=entry.payment_key,
        )


@pytest.mark.django_db
def test_the_key_cannot_be_changed_through_sql(wakes: list[str]) -> None:
    entry = _refund_entry()

    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as c:
        c.execute(f"UPDATE {LEDGER} SET payment_key = 'x' WHERE id = %s", [entry.pk])

    entry.refresh_from_db()
    assert entry.payment_key == "refund:MP-K1:71:1"


@pytest.mark.django_db
def test_marking_paid_out_by_key_marks_that_entry_once_and_logs_the_keys(
    wakes: list[str],
) -> None:
    entry = _refund_entry()
    other = _refund_entry("MP-K4", "73")

    assert ledger_mark_paid_out(payment_keys=[entry.payment_key], actor="payments") == 1
    assert ledger_mark_paid_out(payment_keys=[entry.payment_key], actor="payments") == 0

    entry.refresh_from_db()
    other.refresh_from_db()
    assert entry.paid_out_by == "payments"
    assert other.paid_out_at is None
    first = MoneyAction.objects.order_by("id").first()
    assert first is not None
    assert first.detail["marked_keys"] == ["refund:MP-K1:71:1"]


@pytest.mark.django_db
def test_the_command_reapplies_marks_from_a_file_of_keys(wakes: list[str], tmp_path: Path) -> None:
    entry = _refund_entry()
    keys = tmp_path / "paid.txt"
    keys.write_text(f"{entry.payment_key}\n\n", encoding="utf-8")
    out = io.StringIO()

    call_command("mark_refunds_paid_out", "--keys-file", str(keys), stdout=out)

    assert out.getvalue() == "1 ledger entries marked paid out\n"
    entry.refresh_from_db()
    assert entry.paid_out_at is not None


@pytest.mark.django_db
def test_keys_the_ledger_lacks_are_named_and_the_command_fails(
    wakes: list[str], tmp_path: Path
) -> None:
    entry = _refund_entry()
    keys = tmp_path / "paid.txt"
    keys.write_text(f"{entry.payment_key}\nrefund:MP-GONE:9:1\n", encoding="utf-8")

    with pytest.raises(CommandError) as caught:
        call_command("mark_refunds_paid_out", "--keys-file", str(keys), stdout=io.StringIO())

    assert caught.value.returncode == 3
    assert "refund:MP-GONE:9:1" in str(caught.value)
    entry.refresh_from_db()
    assert entry.paid_out_at is not None  # the keys it holds are marked all the same


@pytest.mark.django_db
def test_the_unpaid_export_lists_keys_and_amounts(wakes: list[str]) -> None:
    paid = _refund_entry()
    _refund_entry("MP-K5", "74")
    ledger_mark_paid_out(entry_ids=[paid.pk], actor="payments")
    out = io.StringIO()

    call_command("export_unpaid_refunds", stdout=out)

    rows = out.getvalue().splitlines()
    assert rows[0] == "payment_key,mp_order_number,mp_line_number,currency,amount,created_at"
    assert len(rows) == 2
    assert rows[1].startswith("refund:MP-K5:74:1,MP-K5,1,EUR,5.00,")


BEFORE = [("returns", "0006_return_authorized_at")]
AFTER = [("returns", "0007_ledger_payment_key")]


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_existing_rows_their_keys_and_keeps_the_ledger_append_only() -> None:
    old = _migrate(BEFORE)
    try:
        user = old.get_model("auth", "User").objects.create(username="m-k", password="!")
        seller = old.get_model("sellers", "Seller").objects.create(user=user, display_name="K")
        order = old.get_model("orders", "Order").objects.create(
            mp_order_number="MP-OLD",
            seller=seller,
            sales_channel="web",
            purchase_date="2026-01-01T00:00:00Z",
            currency="EUR",
            customer_full_name="B",
            ship_full_name="B",
            ship_address1="1 St",
            ship_city="C",
            ship_country_code="FRA",
        )
        line = old.get_model("orders", "OrderLine").objects.create(
            order=order, mp_line_number="2", sku="S", product_name="P", quantity=1, unit_price=9
        )
        refund = old.get_model("returns", "SellerRefund").objects.create(
            seller=seller, order=order, refund_id="55", status="COMPLETE"
        )
        ledger = old.get_model("returns", "RefundLedgerEntry")
        entry = ledger.objects.create(
            order=order, order_line=line, refund=refund, currency="EUR", amount=D("9.00")
        )
        ledger.objects.create(
            order=order,
            order_line=line,
            refund=refund,
            currency="EUR",
            amount=D("-9.00"),
            reverses=entry,
            reason="wrong",
            created_by="staff",
        )

        new = _migrate(AFTER)

        rebuilt = new.get_model("returns", "RefundLedgerEntry")
        keys = dict(rebuilt.objects.values_list("amount", "payment_key"))
        assert keys == {D("9.00"): "refund:MP-OLD:55:2", D("-9.00"): "reversal:refund:MP-OLD:55:2"}
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as c:
            c.execute(f"UPDATE {LEDGER} SET amount = 1 WHERE id = %s", [entry.pk])
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
