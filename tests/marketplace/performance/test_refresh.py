"""The refresh job against known data: exact figures per window, on Postgres and SQLite
(run this file with DATABASE_URL unset for SQLite), and what it must not count."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext

from marketplace.performance import statements
from marketplace.performance.crossings import crossing_emails_send
from marketplace.performance.models import Crossing, Scorecard
from marketplace.performance.refresh import moment_at, scorecards_refresh
from marketplace.performance.selectors import orders_behind
from tests.marketplace.performance.builders import EXPECTED, NOW, ago, known_data, order
from tests.support.factories import OrderFactory

pytestmark = pytest.mark.django_db


def _check(row: Scorecard, expected: dict[str, Any]) -> None:
    for field, value in expected.items():
        got = getattr(row, field)
        if isinstance(value, Decimal):
            assert Decimal(got).quantize(Decimal("0.001")) == value, field
        elif isinstance(value, float):
            assert got == pytest.approx(value, abs=1e-9), field
        else:
            assert got == value, field


@pytest.mark.parametrize("window", [7, 30, 90])
def test_known_orders_give_the_expected_figures_per_window(window: int) -> None:
    # Given orders shipped on time and late, valid and invalid tracking, a cancellation,
    # a paused refund, a waiting return and feed runs
    sellers = known_data()
    # When the job runs
    scorecards_refresh(now=NOW, crossings=False)
    # Then Alice's row of each window holds exactly the expected figures
    row = Scorecard.objects.get(seller=sellers.alice, window_days=window, day=NOW.date())
    _check(row, EXPECTED[window])
    assert row.computed_at == NOW


def test_every_seller_gets_a_row_per_window_and_only_their_own_orders() -> None:
    sellers = known_data()
    scorecards_refresh(now=NOW, crossings=False)
    assert Scorecard.objects.filter(day=NOW.date()).count() == 3 * 3
    bob = Scorecard.objects.get(seller=sellers.bob, window_days=30)
    _check(bob, {"orders": 1, "ship_due": 1, "shipped_late": 0, "late_rate": 0.0})
    assert bob.ship_days_median == pytest.approx(1.0)
    carol = Scorecard.objects.get(seller=sellers.carol, window_days=90)
    _check(carol, {"orders": 0, "ship_due": 0, "shipped": 0})
    assert carol.late_rate is None
    assert carol.ship_days_median is None
    # No return authorized: no wait, not a wait of 0 days.
    assert (bob.returns_authorized, bob.authorization_days_median) == (0, None)
    assert carol.authorization_days_p90 is None


def test_a_second_run_the_same_day_replaces_the_days_rows() -> None:
    sellers = known_data()
    scorecards_refresh(now=NOW, crossings=False)
    order(sellers.bob, "B-2", placed=3, ship_by=2, shipped=0)  # late
    scorecards_refresh(now=NOW + timedelta(hours=1), crossings=False)
    bob = Scorecard.objects.get(seller=sellers.bob, window_days=7, day=NOW.date())
    _check(bob, {"orders": 2, "shipped_late": 1, "late_rate": 0.5})
    assert Scorecard.objects.filter(day=NOW.date()).count() == 9


def test_each_day_keeps_its_row_and_old_days_are_pruned(settings: Any) -> None:
    settings.PERFORMANCE_KEEP_DAYS = 2
    sellers = known_data()
    for days_back in (3, 2, 1, 0):
        scorecards_refresh(now=NOW - timedelta(days=days_back), crossings=False)
    days = sorted(
        Scorecard.objects.filter(seller=sellers.alice, window_days=30).values_list("day", flat=True)
    )
    assert days == [(NOW - timedelta(days=n)).date() for n in (2, 1, 0)]


def test_the_lists_behind_the_figures_hold_exactly_the_counted_orders() -> None:
    sellers = known_data()
    scorecards_refresh(now=NOW, crossings=False)

    def numbers(kind: str, window: int) -> list[str]:
        orders = orders_behind(seller_id=sellers.alice.pk, kind=kind, window_days=window, as_of=NOW)
        return sorted(o.mp_order_number for o in orders)

    assert numbers("late", 7) == ["A-2"]
    assert numbers("late", 30) == ["A-2", "A-4"]
    assert numbers("invalid_tracking", 90) == ["A-2"]
    assert numbers("cancelled", 30) == ["A-5"]
    assert numbers("refunded", 90) == ["A-6"]
    assert numbers("paused", 90) == ["A-6"]
    assert numbers("returned", 30) == []
    assert numbers("late", 90) == ["A-2", "A-4"]  # A-7 is older than every window


def test_history_before_the_window_is_never_read() -> None:
    # Given a seller with orders long before the longest window
    sellers = known_data()
    for n in range(5):
        OrderFactory(seller=sellers.bob, purchase_date=ago(200 + n), lines=1)
    # When the job runs, each order statement bounds purchase_date to the window
    with CaptureQueriesContext(connection) as queries:
        scorecards_refresh(now=NOW, crossings=False)
    moment = moment_at(NOW)
    since = connection.ops.adapt_datetimefield_value(moment.since(90))
    order_scans = [q["sql"] for q in queries.captured_queries if "orders_order o" in q["sql"]]
    assert len(order_scans) == 2  # the shipping and the after-sale families
    for sql in order_scans:
        assert "o.purchase_date >=" in sql
    # ... and the returns statement bounds request_date to it (R-6, requested 100 days
    # ago and authorized, is not counted: EXPECTED[90] has 4 authorized)
    returns_scan = [
        q["sql"] for q in queries.captured_queries if "AS returns_authorized" in q["sql"]
    ]
    assert len(returns_scan) == 1
    assert "FROM returns_return rt WHERE rt.request_date >=" in returns_scan[0]
    # And the figures are those without that history
    bob = Scorecard.objects.get(seller=sellers.bob, window_days=90)
    assert bob.orders == 1
    assert since is not None


def test_one_statement_per_family_whatever_the_number_of_sellers() -> None:
    known_data()
    with CaptureQueriesContext(connection) as few:
        scorecards_refresh(now=NOW, crossings=False)
    for n in range(20):
        order(OrderFactory().seller, f"X-{n}", placed=1, ship_by=0, shipped=0)
    with CaptureQueriesContext(connection) as many:
        scorecards_refresh(now=NOW, crossings=False)
    assert len(many.captured_queries) == len(few.captured_queries)
    assert len(statements.FAMILIES) == 4


# --- thresholds ------------------------------------------------------------------------


def test_a_seller_over_a_threshold_is_recorded_once_and_emailed_once(settings: Any) -> None:
    settings.PERFORMANCE_MIN_SAMPLE = 1
    settings.CELERY_TASK_ALWAYS_EAGER = True
    sellers = known_data()
    # When the job runs three days in a row with Alice over the late shipment limit
    for days_back in (2, 1, 0):
        scorecards_refresh(now=NOW - timedelta(days=days_back))
        crossing_emails_send()
    # Then one crossing of that measure is open, and Alice got one e-mail
    late = Crossing.objects.filter(seller=sellers.alice, measure="late_shipment")
    assert late.count() == 1
    assert late.get().cleared_at is None
    assert late.get().emailed_at is not None
    alice_mail = [m for m in mail.outbox if m.to == ["alice@example.com"]]
    assert len(alice_mail) == 1
    assert "Late shipment rate: 50.0\u00a0%" in alice_mail[0].body
    assert "limit: 4.0\u00a0%" in alice_mail[0].body
    assert "/sellers/performance/" in alice_mail[0].body
    # Bob, on time, is not flagged for it
    assert not Crossing.objects.filter(seller=sellers.bob, measure="late_shipment").exists()


def test_a_seller_back_under_the_threshold_is_cleared_and_a_new_crossing_mails_again(
    settings: Any,
) -> None:
    settings.PERFORMANCE_MIN_SAMPLE = 1
    sellers = known_data()
    scorecards_refresh(now=NOW)
    crossing_emails_send()
    settings.PERFORMANCE_THRESHOLDS = {**settings.PERFORMANCE_THRESHOLDS, "late_shipment": 0.9}
    scorecards_refresh(now=NOW)
    assert not Crossing.objects.filter(
        seller=sellers.alice, measure="late_shipment", cleared_at__isnull=True
    ).exists()
    settings.PERFORMANCE_THRESHOLDS = {**settings.PERFORMANCE_THRESHOLDS, "late_shipment": 0.04}
    scorecards_refresh(now=NOW)
    crossing_emails_send()
    assert Crossing.objects.filter(seller=sellers.alice, measure="late_shipment").count() == 2
    assert len([m for m in mail.outbox if m.to == ["alice@example.com"]]) == 2


def test_too_small_a_sample_is_not_judged(settings: Any) -> None:
    settings.PERFORMANCE_MIN_SAMPLE = 10
    known_data()
    scorecards_refresh(now=NOW)
    measures = set(Crossing.objects.values_list("measure", flat=True))
    # Only the count measure (no sample) is judged: Alice's return waits too long.
    assert measures == {"returns_overdue"}


def test_the_benchmarks_bare_select_runs_the_same_aggregates() -> None:
    # The yardstick of bench P10: one statement, one row, the families' totals.
    known_data()
    sql, params = statements.baseline_select(connection, moment_at(NOW))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        names = [column[0] for column in cursor.description]
    assert len(rows) == 1
    shipping = dict(zip(names, rows[0], strict=True))
    # Orders placed in the 90-day window, over the three windows: Alice 4+6+7, Bob 1+1+1.
    assert shipping["s0_orders"] == 20
