"""A buyer's orders are found by e-mail (erasure, data export) through an index, not by
reading every order: ``customer_email__iexact`` compares ``UPPER(customer_email)``, which
``order_customer_email_upper`` holds."""

from __future__ import annotations

import pytest
from django.db import connection

from marketplace.privacy.erasure import buyer_orders
from tests.marketplace.privacy.builders import EMAIL, buyer_order

pytestmark = pytest.mark.django_db


@pytest.mark.postgres
def test_the_buyer_lookup_by_email_reads_the_expression_index() -> None:
    order = buyer_order(with_return=None)
    buyer_order(with_return=None, email="someone.else@example.org")
    with connection.cursor() as cursor:
        # A two-row table is read whole whatever the indexes: forbid that, so the plan
        # shows whether the index matches the lookup's expression at all.
        cursor.execute("SET LOCAL enable_seqscan = off")
    query = buyer_orders(email=f"  {EMAIL.upper()} ")

    plan = query.explain()

    assert "order_customer_email_upper" in plan, plan
    assert list(query) == [order]
