"""marketplace.db: ``rows_update`` writes different values into each row in one UPDATE;
``rows_insert`` inserts new rows in one statement."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.db import rows_insert, rows_update
from marketplace.orders.models import OrderSync, SyncEvent
from tests.marketplace.conftest import make_order

pytestmark = pytest.mark.django_db


def test_rows_update_writes_each_rows_own_values(seller: Any, quiet_broker: Any) -> None:
    first, second = (OrderSync.objects.get(order=make_order(f"MP-DB{i}")) for i in range(2))
    later = timezone.now() + timedelta(minutes=5)
    first.status, first.next_attempt_at, first.last_payload = "retrying", later, {"a": [1, 2]}
    first.last_error_status = 503
    second.status, second.next_attempt_at, second.last_payload = "failed", None, None
    second.last_error = 'it said "no" \\ twice'  # quotes and backslashes survive
    assert (
        rows_update(
            [first, second],
            ["status", "next_attempt_at", "last_payload", "last_error", "last_error_status"],
        )
        == 2
    )
    one, two = (OrderSync.objects.get(pk=s.pk) for s in (first, second))
    assert (one.status, one.next_attempt_at, one.last_payload) == ("retrying", later, {"a": [1, 2]})
    assert one.last_error_status == 503
    assert (two.status, two.next_attempt_at, two.last_payload) == ("failed", None, None)
    assert two.last_error == 'it said "no" \\ twice'
    assert two.last_error_status is None


def test_rows_update_with_nothing_to_write_does_nothing() -> None:
    assert rows_update([], ["status"]) == 0


def test_rows_update_prepares_values_of_another_type(seller: Any, quiet_broker: Any) -> None:
    """A plain column's value is passed as it is only when it already has the column's
    type: anything else still goes through the field (an int into a text column, a
    string into an integer column)."""
    first, second = (OrderSync.objects.get(order=make_order(f"MP-DT{i}")) for i in range(2))
    first.last_error, first.failures = "text", 2
    second.last_error, second.failures = 404, "3"  # type: ignore[assignment]
    assert rows_update([first, second], ["last_error", "failures"]) == 2
    one, two = (OrderSync.objects.get(pk=s.pk) for s in (first, second))
    assert (one.last_error, one.failures) == ("text", 2)
    assert (two.last_error, two.failures) == ("404", 3)


def test_rows_update_twice_in_one_transaction_writes_only_the_second_calls_rows(
    seller: Any, quiet_broker: Any
) -> None:
    """On Postgres the values go through a temporary table of the session: a second call
    in the same transaction must not see the first call's rows again."""
    first, second = (OrderSync.objects.get(order=make_order(f"MP-TW{i}")) for i in range(2))
    first.last_error, second.last_error = "first call", "first call"
    assert rows_update([first, second], ["last_error"]) == 2
    first.last_error = "not written"  # changed on the object, not passed again
    second.last_error = "second call"
    assert rows_update([second], ["last_error"]) == 1
    assert OrderSync.objects.get(pk=first.pk).last_error == "first call"
    assert OrderSync.objects.get(pk=second.pk).last_error == "second call"


@pytest.mark.django_db(transaction=True)
def test_rows_update_outside_a_transaction_writes_its_rows(seller: Any, quiet_broker: Any) -> None:
    """In autocommit each statement would commit on its own (and a temporary table that
    empties at commit would be empty by the ``UPDATE``): the call is one transaction."""
    sync = OrderSync.objects.get(order=make_order("MP-AUTO"))
    sync.last_error = "written"
    assert rows_update([sync], ["last_error"]) == 1
    assert OrderSync.objects.get(pk=sync.pk).last_error == "written"


def test_rows_insert_writes_every_row_with_its_values(seller: Any, quiet_broker: Any) -> None:
    """``rows_insert`` (a COPY on Postgres, bulk_create elsewhere): every field as the
    ORM would write it — JSON, text with quotes, tabs, newlines and backslashes (COPY's
    own escapes), NULLs, ``auto_now_add`` stamped."""
    order = make_order("MP-INS1")
    tricky = 'tab\there, "quoted"\nnew line \\ backslash \\N'
    events = [
        SyncEvent(order=order, kind=SyncEvent.Kind.PUSHED, message=tricky, detail={"k": [1]}),
        SyncEvent(order=order, kind=SyncEvent.Kind.PUSH_FAILED, message="", version=None),
    ]
    before = SyncEvent.objects.filter(order=order).count()
    assert rows_insert(events) == 2
    stored = list(SyncEvent.objects.filter(order=order).order_by("id"))[before:]
    assert [(e.kind, e.message, e.detail, e.version) for e in stored] == [
        (SyncEvent.Kind.PUSHED, tricky, {"k": [1]}, None),
        (SyncEvent.Kind.PUSH_FAILED, "", {}, None),
    ]
    assert all(e.created_at is not None for e in stored)
    assert rows_insert([]) == 0
