"""The overview's data-heavy aggregates, computed by a beat job instead of per page view.

Tallies over every seller, connection and order, push lag, and the last 24 hours of
platform calls and push failures grow with the data (tens of millions of rows a day at
full scale). A page an operations team keeps open, refreshing every 10 s, must not scan
them on each render: a beat job stores them as a snapshot every 30 s and the overview
reads the latest one (one indexed query). With ``DASHBOARD_ACTIVITY_MAX_AGE`` = 0 the
overview computes them on every render instead (exact to the second; what tests use).
The lists that call for action (sellers to reconnect, failed orders) stay live.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Min, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from marketplace.dashboard.models import ActivitySnapshot
from marketplace.dashboard.selectors import (
    ACCESS_EXPIRY_WINDOW,
    REFRESH_EXPIRY_WINDOW,
    SYNC_BADGES,
    HourBucket,
    Tally,
    calls_per_hour,
    connection_state_counts,
    is_failed_call,
    sync_status_tallies,
)
from marketplace.orders.models import OrderSync, SyncEvent
from marketplace.platform.models import PlatformCall
from sellers.models import PlatformConnection

ConnState = PlatformConnection.State


@dataclass(frozen=True)
class Activity:
    computed_at: datetime
    connection_counts: dict[str, int]
    access_expiring: int
    refresh_expiring: int
    oldest_pull_success_at: datetime | None
    never_pulled: int
    pull_errors: int
    pushes_due: int
    oldest_due_push_at: datetime | None
    sync_counts: list[Tally]
    calls_24h: int
    failed_calls_24h: int
    push_failures_24h: int
    chart: list[HourBucket]


def activity_compute(*, now: datetime) -> Activity:
    day_ago = now - timedelta(hours=24)
    # Grants and pull health of the connected sellers in one aggregate.
    live = PlatformConnection.objects.filter(state=ConnState.CONNECTED).aggregate(
        access_expiring=Count(
            "id", filter=Q(access_token_expires_at__lte=now + ACCESS_EXPIRY_WINDOW)
        ),
        refresh_expiring=Count(
            "id", filter=Q(refresh_token_expires_at__lte=now + REFRESH_EXPIRY_WINDOW)
        ),
        oldest_pull=Min("seller__sync__last_success_at"),
        never_pulled=Count("id", filter=Q(seller__sync__last_success_at__isnull=True)),
        pull_errors=Count(
            "id",
            filter=Q(seller__sync__isnull=False) & ~Q(seller__sync__last_error=""),
        ),
    )
    # Push lag: the longest any due push has waited (pending, or a retry whose time came).
    due = OrderSync.objects.filter(
        Q(status=OrderSync.Status.PENDING)
        | Q(status=OrderSync.Status.RETRYING, next_attempt_at__lte=now)
    ).aggregate(n=Count("id"), oldest=Min("next_attempt_at"))
    calls = PlatformCall.objects.filter(created_at__gte=day_ago).aggregate(
        total=Count("id"), failed=Count("id", filter=is_failed_call())
    )
    push_failures = SyncEvent.objects.filter(
        created_at__gte=day_ago,
        kind__in=[SyncEvent.Kind.PUSH_FAILED, SyncEvent.Kind.RETRY_SCHEDULED],
    ).count()
    return Activity(
        computed_at=now,
        connection_counts=connection_state_counts(),
        access_expiring=live["access_expiring"],
        refresh_expiring=live["refresh_expiring"],
        oldest_pull_success_at=live["oldest_pull"],
        never_pulled=live["never_pulled"],
        pull_errors=live["pull_errors"],
        pushes_due=due["n"],
        oldest_due_push_at=due["oldest"],
        sync_counts=sync_status_tallies(),
        calls_24h=calls["total"],
        failed_calls_24h=calls["failed"],
        push_failures_24h=push_failures,
        chart=calls_per_hour(now=now),
    )


_SCALARS = ("access_expiring", "refresh_expiring", "never_pulled", "pull_errors", "pushes_due")
_MOMENTS = ("oldest_pull_success_at", "oldest_due_push_at")


def _moment(value: str | None) -> datetime | None:
    return parse_datetime(value) if value else None


def _to_json(activity: Activity) -> dict[str, Any]:
    return {
        "connection_counts": activity.connection_counts,
        **{name: getattr(activity, name) for name in _SCALARS},
        **{
            name: (moment.isoformat() if (moment := getattr(activity, name)) else None)
            for name in _MOMENTS
        },
        "sync_counts": {t.value: t.count for t in activity.sync_counts},
        "calls_24h": activity.calls_24h,
        "failed_calls_24h": activity.failed_calls_24h,
        "push_failures_24h": activity.push_failures_24h,
        "chart": [[b.start.isoformat(), b.pushes, b.pulls, b.failures] for b in activity.chart],
    }


def _from_snapshot(snapshot: ActivitySnapshot) -> Activity:
    data = snapshot.data
    counts = data["sync_counts"]
    return Activity(
        computed_at=snapshot.computed_at,
        connection_counts=data["connection_counts"],
        **{name: data[name] for name in _SCALARS},
        oldest_pull_success_at=_moment(data["oldest_pull_success_at"]),
        oldest_due_push_at=_moment(data["oldest_due_push_at"]),
        sync_counts=[
            Tally(value, OrderSync.Status(value).label, counts.get(value, 0), badge)
            for value, badge in SYNC_BADGES.items()
        ],
        calls_24h=data["calls_24h"],
        failed_calls_24h=data["failed_calls_24h"],
        push_failures_24h=data["push_failures_24h"],
        chart=[
            HourBucket(start=datetime.fromisoformat(start), pushes=p, pulls=g, failures=f)
            for start, p, g, f in data["chart"]
        ],
    )


def activity_snapshot_refresh(*, now: datetime | None = None) -> ActivitySnapshot:
    """Compute the aggregates, store them, and drop the snapshots before them."""
    now = now or timezone.now()
    snapshot = ActivitySnapshot.objects.create(
        computed_at=now, data=_to_json(activity_compute(now=now))
    )
    ActivitySnapshot.objects.filter(computed_at__lt=now).delete()
    return snapshot


def activity_current(*, now: datetime) -> Activity:
    """The latest snapshot if fresh enough; otherwise compute (and store) one now."""
    max_age = settings.DASHBOARD_ACTIVITY_MAX_AGE
    if max_age <= 0:
        return activity_compute(now=now)
    snapshot = ActivitySnapshot.objects.order_by("-computed_at").first()
    if snapshot is None or snapshot.computed_at < now - timedelta(seconds=max_age):
        # The beat job is late or not running: the page still works, only slower.
        snapshot = activity_snapshot_refresh(now=now)
    return _from_snapshot(snapshot)
