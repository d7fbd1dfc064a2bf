"""The staff overview: the numbers people act on, read live (``attention_get``), over the
data-heavy aggregates of the latest activity snapshot (``activity.py``).

Above both ``selectors`` (the tallies and the chart) and ``activity`` (which stores them
every 30 s), so neither imports the other's reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection as db_connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from marketplace.dashboard.activity import activity_current
from marketplace.dashboard.selectors import HourBucket, Tally, connection_tallies
from marketplace.orders.models import Order, OrderSync
from marketplace.orders.selectors import order_list
from marketplace.sync.models import SellerSync
from marketplace.sync.selectors import sellers_failing_pulls
from sellers.models import PlatformConnection, Seller

ConnState = PlatformConnection.State
SyncStatus = OrderSync.Status

ATTENTION_LIMIT = 10


@dataclass(frozen=True)
class Overview:
    now: datetime
    connections: list[Tally]
    sellers_total: int
    access_expiring: int
    refresh_expiring: int
    sync_counts: list[Tally]
    orders_total: int
    calls_24h: int
    failed_calls_24h: int
    push_failures_24h: int
    pushes_due: int
    oldest_due_push_at: datetime | None
    oldest_pull_success_at: datetime | None
    never_pulled: int
    pull_errors: int
    activity_at: datetime  # when the snapshot numbers were computed (``now``: live)
    chart: list[HourBucket]
    needs_reauth: list[Seller]
    failed_orders: list[Order]
    failing_pulls: list[SellerSync]

    @property
    def push_lag(self) -> timedelta | None:
        return self.now - self.oldest_due_push_at if self.oldest_due_push_at else None

    @property
    def pull_lag(self) -> timedelta | None:
        return self.now - self.oldest_pull_success_at if self.oldest_pull_success_at else None


@dataclass(frozen=True)
class Attention:
    """What staff act on, read live: each number through an index, bounded by what there
    is to act on (never a count over every order or seller)."""

    needs_reauth: int
    failed: int
    waiting_for_connection: int
    oldest_due_push_at: datetime | None


# One statement of scalar subqueries (Postgres and SQLite): each an index probe or an
# index-only count of a small set (dead letters: the partial index ordersync_failed_recent;
# the others: ordersync_due and conn_state_idx). Names come from the models, values are
# parameters.
_ATTENTION_SQL = """
SELECT
  (SELECT COUNT(*) FROM {conn} WHERE state = %s),
  (SELECT COUNT(*) FROM {sync} WHERE status = %s AND next_attempt_at IS NULL),
  (SELECT COUNT(*) FROM {sync} WHERE status = %s),
  (SELECT MIN(next_attempt_at) FROM {sync} WHERE status = %s),
  (SELECT MIN(next_attempt_at) FROM {sync} WHERE status = %s AND next_attempt_at <= %s)
"""


def _moment(value: Any) -> datetime | None:
    """A datetime as the raw cursor gives it (SQLite: text, naive UTC)."""
    if value is None or isinstance(value, datetime):
        return value
    parsed = parse_datetime(str(value))
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, UTC)
    return parsed


def attention_get(*, now: datetime) -> Attention:
    """Live: sellers to reconnect, dead letters, orders waiting for a grant, push lag."""
    sql = _ATTENTION_SQL.format(
        conn=PlatformConnection._meta.db_table, sync=OrderSync._meta.db_table
    )
    params = [
        ConnState.NEEDS_REAUTH,
        SyncStatus.FAILED,
        SyncStatus.WAITING_FOR_CONNECTION,
        SyncStatus.PENDING,
        SyncStatus.RETRYING,
        db_connection.ops.adapt_datetimefield_value(now),
    ]
    with db_connection.cursor() as cursor:
        cursor.execute(sql, params)
        needs_reauth, failed, waiting, oldest_pending, oldest_retry = cursor.fetchone()
    due = [m for m in (_moment(oldest_pending), _moment(oldest_retry)) if m is not None]
    return Attention(
        needs_reauth=needs_reauth,
        failed=failed,
        waiting_for_connection=waiting,
        oldest_due_push_at=min(due) if due else None,
    )


def overview_get(*, now: datetime) -> Overview:
    """The overview. The cards people act on (connections, orders not synced, push lag,
    the lists) are read live; the rest comes from the activity snapshot (``activity_at``)."""
    activity = activity_current(now=now)
    attention = attention_get(now=now)
    # Whole-population tallies come from the snapshot (``activity_at``); the numbers staff
    # act on replace theirs live.
    connection_counts = {
        **activity.connection_counts,
        ConnState.NEEDS_REAUTH: attention.needs_reauth,
    }
    connections, sellers_total = connection_tallies(connection_counts)
    live_sync: dict[str, int] = {
        SyncStatus.FAILED: attention.failed,
        SyncStatus.WAITING_FOR_CONNECTION: attention.waiting_for_connection,
    }
    sync_counts = [
        Tally(t.value, t.label, live_sync.get(t.value, t.count), t.badge)
        for t in activity.sync_counts
    ]
    return Overview(
        now=now,
        connections=connections,
        sellers_total=sellers_total,
        access_expiring=activity.access_expiring,
        refresh_expiring=activity.refresh_expiring,
        sync_counts=sync_counts,
        orders_total=sum(t.count for t in sync_counts),
        calls_24h=activity.calls_24h,
        failed_calls_24h=activity.failed_calls_24h,
        push_failures_24h=activity.push_failures_24h,
        activity_at=activity.computed_at,
        pushes_due=activity.pushes_due,
        oldest_due_push_at=attention.oldest_due_push_at,
        oldest_pull_success_at=activity.oldest_pull_success_at,
        never_pulled=activity.never_pulled,
        pull_errors=activity.pull_errors,
        chart=activity.chart,
        # The lists that call for action are read live (indexed, limited).
        needs_reauth=list(
            Seller.objects.filter(connection__state=ConnState.NEEDS_REAUTH)
            .select_related("user", "connection")
            .order_by("-connection__updated_at")[:ATTENTION_LIMIT]
        ),
        # next_attempt_at is NULL on every failed row; saying so lets Postgres use the
        # partial index ordersync_failed_recent (see OrderSync.Meta).
        failed_orders=list(
            order_list(sync_status=SyncStatus.FAILED)
            .filter(sync__next_attempt_at__isnull=True)
            .order_by("-sync__updated_at")[:ATTENTION_LIMIT]
        ),
        # Sellers whose pulls failed several times in a row (indexed, limited).
        failing_pulls=sellers_failing_pulls(limit=ATTENTION_LIMIT),
    )
