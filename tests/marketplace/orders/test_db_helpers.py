"""marketplace.db.rows_update: one UPDATE writes different values into each row."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from marketplace.db import rows_update
from marketplace.orders.models import OrderSync
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
