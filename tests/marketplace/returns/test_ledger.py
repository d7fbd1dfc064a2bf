"""The refund ledger is append-only: no UPDATE or DELETE through the ORM, the admin or
plain SQL (a database trigger), except marking an entry paid out once; a correction is a
reversing entry; every staff step on money is logged with who and when."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.db.utils import ConnectionHandler
from django.test import Client

from marketplace.returns import append_only
from marketplace.returns.models import (
    Decision,
    MoneyAction,
    PlatformStep,
    RefundLedgerEntry,
    SellerRefund,
)
from marketplace.returns.services.decide import refund_decide
from marketplace.returns.services.ledger import (
    LedgerRefused,
    ledger_mark_paid_out,
    ledger_reverse,
)
from tests.marketplace.returns.conftest import shipped_order
from tests.marketplace.returns.test_money import new_refund, new_return

pytestmark = pytest.mark.django_db

D = Decimal
LEDGER = "returns_refundledgerentry"


@pytest.fixture
def paid_entry(wakes: list[str]) -> RefundLedgerEntry:
    """A line the buyer paid 24.00 for, 20.00 of it refunded, accepted and paid out."""
    order = shipped_order()
    refund = new_refund(order, "1", {"item": "20.00"})
    assert refund_decide(refund_pk=refund.pk) == Decision.ACCEPTED
    entry = RefundLedgerEntry.objects.get()
    assert ledger_mark_paid_out(entry_ids=[entry.pk], actor="payments") == 1
    entry.refresh_from_db()
    return entry


def _refused(sql: str, params: list[Any]) -> str:
    with pytest.raises(IntegrityError) as caught, transaction.atomic(), connection.cursor() as c:
        c.execute(sql, params)
    return str(caught.value)


def test_an_update_through_sql_is_refused(paid_entry: RefundLedgerEntry) -> None:
    message = _refused(f"UPDATE {LEDGER} SET amount = 0 WHERE id = %s", [paid_entry.pk])

    assert "append-only" in message
    paid_entry.refresh_from_db()
    assert paid_entry.amount == D("20.00")


def test_re_pointing_an_entry_to_another_line_is_refused(paid_entry: RefundLedgerEntry) -> None:
    _refused(
        f"UPDATE {LEDGER} SET order_line_id = order_line_id + 1 WHERE id = %s", [paid_entry.pk]
    )


def test_a_delete_through_sql_is_refused(paid_entry: RefundLedgerEntry) -> None:
    message = _refused(f"DELETE FROM {LEDGER} WHERE id = %s", [paid_entry.pk])

    assert "append-only" in message
    assert RefundLedgerEntry.objects.filter(pk=paid_entry.pk).exists()


def test_paid_out_is_set_once_and_never_changed_again(paid_entry: RefundLedgerEntry) -> None:
    assert paid_entry.paid_out_at is not None
    assert paid_entry.paid_out_by == "payments"

    # Marking again changes nothing, and SQL cannot move or clear the time.
    assert ledger_mark_paid_out(entry_ids=[paid_entry.pk], actor="someone-else") == 0
    _refused(f"UPDATE {LEDGER} SET paid_out_at = NULL WHERE id = %s", [paid_entry.pk])
    _refused(f"UPDATE {LEDGER} SET paid_out_by = 'x' WHERE id = %s", [paid_entry.pk])
    paid_entry.refresh_from_db()
    assert paid_entry.paid_out_by == "payments"


def test_marking_paid_out_may_not_change_anything_else(wakes: list[str]) -> None:
    order = shipped_order()
    refund_decide(refund_pk=new_refund(order, "1", {"item": "5.00"}).pk)
    entry = RefundLedgerEntry.objects.get()

    _refused(
        f"UPDATE {LEDGER} SET paid_out_at = now(), amount = 1 WHERE id = %s"
        if connection.vendor == "postgresql"
        else f"UPDATE {LEDGER} SET paid_out_at = '2026-01-01', amount = 1 WHERE id = %s",
        [entry.pk],
    )


def test_a_paid_entry_cannot_be_deleted_so_a_second_refund_of_20_on_24_is_refused(
    paid_entry: RefundLedgerEntry,
) -> None:
    # Given the paid 20.00 entry of a 24.00 line: deleting it fails (ORM, as the admin would)
    with pytest.raises(IntegrityError), transaction.atomic():
        paid_entry.delete()
    # When the seller posts a second refund of 20.00 on the line
    order = paid_entry.order
    second = new_refund(order, "2", {"item": "20.00"})
    # Then it is refused: 40.00 would be refunded on a 24.00 line
    assert refund_decide(refund_pk=second.pk) == Decision.REFUSED
    second.refresh_from_db()
    assert [e["code"] for e in second.errors] == ["EXCESS_ITEM_REFUND"]
    assert sum(e.amount for e in RefundLedgerEntry.objects.all()) == D("20.00")


def test_a_reversal_is_a_new_opposite_entry_that_frees_the_line(
    paid_entry: RefundLedgerEntry,
) -> None:
    reversal = ledger_reverse(entry_id=paid_entry.pk, actor="staff", reason="paid twice by hand")

    assert (reversal.amount, reversal.reverses_id) == (D("-20.00"), paid_entry.pk)
    assert (reversal.created_by, reversal.reason) == ("staff", "paid twice by hand")
    assert RefundLedgerEntry.objects.count() == 2  # the original is kept
    # The line's room is back: a new 20.00 refund fits.
    again = new_refund(paid_entry.order, "2", {"item": "20.00"})
    assert refund_decide(refund_pk=again.pk) == Decision.ACCEPTED
    action = MoneyAction.objects.get(kind="reverse")
    assert action.actor == "staff"
    assert action.detail["amount"] == "-20.00"


def test_an_entry_is_reversed_once_and_only_with_a_reason(paid_entry: RefundLedgerEntry) -> None:
    with pytest.raises(LedgerRefused, match="reason"):
        ledger_reverse(entry_id=paid_entry.pk, actor="staff", reason="  ")
    reversal = ledger_reverse(entry_id=paid_entry.pk, actor="staff", reason="wrong line")
    with pytest.raises(LedgerRefused, match="already reversed"):
        ledger_reverse(entry_id=paid_entry.pk, actor="staff", reason="again")
    with pytest.raises(LedgerRefused, match="itself a reversal"):
        ledger_reverse(entry_id=reversal.pk, actor="staff", reason="undo")


def test_the_database_refuses_a_negative_entry_that_reverses_nothing(
    paid_entry: RefundLedgerEntry,
) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        RefundLedgerEntry.objects.create(
            order=paid_entry.order,
            order_line=paid_entry.order_line,
            return_request=None,
            refund=SellerRefund.objects.create(
                seller=paid_entry.order.seller,
                order=paid_entry.order,
                refund_id="99",
                status="CREATED",
            ),
            currency="EUR",
            amount=D("-5.00"),
            payment_key="refund:negative",
        )


def test_every_money_step_is_logged_and_the_log_is_append_only(
    paid_entry: RefundLedgerEntry,
) -> None:
    call_command("reverse_ledger_entry", str(paid_entry.pk), reason="test", actor="ops")

    kinds = list(MoneyAction.objects.order_by("id").values_list("kind", "actor"))
    assert kinds == [("mark_paid_out", "payments"), ("reverse", "ops")]
    row = MoneyAction.objects.first()
    assert row is not None
    _refused("UPDATE returns_moneyaction SET actor = 'nobody' WHERE id = %s", [row.pk])
    _refused("DELETE FROM returns_moneyaction WHERE id = %s", [row.pk])


def test_the_command_marks_paid_out_and_logs_who(wakes: list[str]) -> None:
    order = shipped_order()
    refund_decide(refund_pk=new_refund(order, "1", {"item": "5.00"}).pk)

    call_command("mark_refunds_paid_out", "--all", "--actor", "payments-run-7")

    entry = RefundLedgerEntry.objects.get()
    assert entry.paid_out_by == "payments-run-7"
    assert MoneyAction.objects.get().detail["marked"] == [entry.pk]


# --- the admin ------------------------------------------------------------------------------


def test_the_admin_cannot_add_change_or_delete_ledger_entries(
    staff_client: Client, paid_entry: RefundLedgerEntry
) -> None:
    base = "/admin/returns/refundledgerentry"

    assert staff_client.get(f"{base}/add/").status_code == 403
    assert staff_client.get(f"{base}/{paid_entry.pk}/delete/").status_code == 403
    assert staff_client.post(f"{base}/{paid_entry.pk}/delete/", {"post": "yes"}).status_code == 403
    page = staff_client.get(f"{base}/{paid_entry.pk}/change/")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'name="amount"' not in body
    assert 'name="order_line"' not in body
    assert 'name="_save"' not in body
    changed = staff_client.post(
        f"{base}/{paid_entry.pk}/change/", {"amount": "0", "order_line": "1"}
    )
    assert changed.status_code == 403
    paid_entry.refresh_from_db()
    assert paid_entry.amount == D("20.00")


def test_the_admin_names_the_ledger_in_plain_english(
    staff_client: Client, paid_entry: RefundLedgerEntry
) -> None:
    body = staff_client.get("/admin/").content.decode()

    assert "Refund ledger entries" in body
    assert "entrys" not in body
    listing = staff_client.get("/admin/returns/refundledgerentry/")
    assert listing.status_code == 200
    assert "Delete selected" not in listing.content.decode()


def test_the_admin_reverses_with_a_reason_and_marks_paid_out(
    staff_client: Client, wakes: list[str]
) -> None:
    order = shipped_order()
    refund_decide(refund_pk=new_refund(order, "1", {"item": "5.00"}).pk)
    entry = RefundLedgerEntry.objects.get()
    url = "/admin/returns/refundledgerentry/"

    no_reason = staff_client.post(
        url, {"action": "reverse", "_selected_action": [entry.pk], "reason": ""}, follow=True
    )
    assert "Give a reason" in no_reason.content.decode()
    assert RefundLedgerEntry.objects.count() == 1

    staff_client.post(
        url, {"action": "reverse", "_selected_action": [entry.pk], "reason": "duplicate"}
    )
    reversal = RefundLedgerEntry.objects.get(reverses=entry)
    assert (reversal.amount, reversal.created_by) == (D("-5.00"), "staff")

    staff_client.post(url, {"action": "mark_paid_out", "_selected_action": [entry.pk]})
    entry.refresh_from_db()
    assert entry.paid_out_by == "staff"
    assert list(MoneyAction.objects.order_by("id").values_list("kind", "actor")) == [
        ("reverse", "staff"),
        ("mark_paid_out", "staff"),
    ]


def test_a_seller_refunds_decision_and_amounts_cannot_be_changed_in_the_admin(
    staff_client: Client, paid_entry: RefundLedgerEntry
) -> None:
    refund = paid_entry.refund
    assert refund is not None
    base = "/admin/returns/sellerrefund"

    assert staff_client.get(f"{base}/add/").status_code == 403
    assert staff_client.get(f"{base}/{refund.pk}/delete/").status_code == 403
    page = staff_client.get(f"{base}/{refund.pk}/change/")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'name="decision"' not in body
    assert 'name="lines-0-item_refund"' not in body
    assert "20.00" in body  # the line's amount is shown, as text
    response = staff_client.post(f"{base}/{refund.pk}/change/", {"decision": "refused"})
    assert response.status_code == 403
    refund.refresh_from_db()
    assert refund.decision == Decision.ACCEPTED


def test_a_returns_state_decision_and_amounts_are_read_only_in_the_admin(
    staff_client: Client, wakes: list[str]
) -> None:
    ret = new_return(shipped_order(), "R1")
    base = "/admin/returns/return"

    assert staff_client.get(f"{base}/add/").status_code == 403
    assert staff_client.get(f"{base}/{ret.pk}/delete/").status_code == 403
    page = staff_client.get(f"{base}/{ret.pk}/change/")
    assert page.status_code == 200
    body = page.content.decode()
    for field in ("status", "decision", "errors", "principal_refund_amount"):
        assert f'name="{field}"' not in body
        assert f'name="lines-0-{field}"' not in body  # nor in the lines' inline


def test_a_staff_retry_of_a_step_is_logged(staff_client: Client, wakes: list[str]) -> None:
    order = shipped_order()
    refund_decide(refund_pk=new_refund(order, "1", {"item": "5.00"}).pk)
    step = PlatformStep.objects.get()
    PlatformStep.objects.filter(pk=step.pk).update(status="failed")

    response = staff_client.post(f"/dashboard/returns/steps/{step.pk}/retry/")

    assert response.status_code == 302
    action = MoneyAction.objects.get(kind="retry_step")
    assert (action.actor, action.detail["queued"], action.detail["step"]) == (
        "staff",
        True,
        step.pk,
    )


# --- SQLite (the development database) --------------------------------------------------------


def test_on_sqlite_too_an_update_or_delete_is_refused_and_paid_out_is_set_once() -> None:
    # The ledger's and the log's tables as the models define them, in a SQLite database of
    # their own, with the triggers the migration installs there.
    handler = ConnectionHandler(
        {
            "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"},
        }
    )
    lite = handler["default"]
    try:
        with lite.schema_editor() as editor:
            editor.create_model(RefundLedgerEntry)
            editor.create_model(MoneyAction)
            append_only.triggers_install(
                editor,
                ledger_columns=[f.column for f in RefundLedgerEntry._meta.concrete_fields],
            )
        with lite.cursor() as cursor:
            cursor.execute("PRAGMA foreign_keys = OFF")  # the orders' tables are not here
            cursor.execute(
                f"INSERT INTO {LEDGER} (order_id, order_line_id, refund_id, currency, amount, "
                "detail, reason, created_by, paid_out_by, created_at, payment_key) "
                "VALUES (1, 1, 1, 'EUR', '20.00', '{}', '', '', '', '2026-01-01', 'refund:M:1:1')"
            )
            for sql in (
                f"UPDATE {LEDGER} SET amount = '0'",
                f"UPDATE {LEDGER} SET payment_key = 'refund:M:1:2'",
                f"UPDATE {LEDGER} SET order_line_id = 2",
                f"UPDATE {LEDGER} SET paid_out_at = '2026-01-02', amount = '1'",
                f"DELETE FROM {LEDGER}",
            ):
                with pytest.raises(IntegrityError, match="append-only"):
                    cursor.execute(sql)
            cursor.execute(f"UPDATE {LEDGER} SET paid_out_at = '2026-01-02', paid_out_by = 'p'")
            with pytest.raises(IntegrityError, match="append-only"):
                cursor.execute(f"UPDATE {LEDGER} SET paid_out_at = '2026-01-03'")
            cursor.execute(
                f"SELECT amount = 20, paid_out_at IS NOT NULL, paid_out_by FROM {LEDGER}"
            )
            assert cursor.fetchall() == [(1, 1, "p")]
    finally:
        handler.close_all()
