"""Reads for the staff dashboard (the seller's own pages read through marketplace.portal).

Every page is served by a fixed number of queries whatever the data size: lists are
paginated, related rows come through ``select_related`` / ``prefetch_related``, and
per-row counts are correlated subqueries (``annotate``), never a query per row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import (
    Count,
    F,
    OuterRef,
    Q,
    QuerySet,
    Value,
)
from django.db.models.functions import Coalesce, TruncHour

from marketplace.dashboard.models import StaffAction
from marketplace.db import count_subquery
from marketplace.orders.models import (
    Order,
    OrderSync,
    SyncEvent,
    ValidationProblem,
)
from marketplace.orders.selectors import (
    order_detail_queryset,
)
from marketplace.performance import selectors as performance
from marketplace.platform.models import PlatformCall
from sellers.models import ConnectionEvent, PlatformConnection, Seller

ConnState = PlatformConnection.State
SyncStatus = OrderSync.Status

ACCESS_EXPIRY_WINDOW = timedelta(hours=1)
REFRESH_EXPIRY_WINDOW = timedelta(days=30)
CHART_HOURS = 24
RECENT_CALLS = 50

# The status badge class for each sync status and connection state (templates use these).
SYNC_BADGES: dict[str, str] = {
    SyncStatus.SYNCED: "ok",
    SyncStatus.PENDING: "info",
    SyncStatus.RETRYING: "warn",
    SyncStatus.WAITING_FOR_CONNECTION: "warn",
    SyncStatus.FAILED: "bad",
}
CONNECTION_BADGES: dict[str, str] = {
    ConnState.CONNECTED: "ok",
    ConnState.NEEDS_REAUTH: "bad",
    ConnState.DISCONNECTED: "warn",
    ConnState.NOT_CONNECTED: "",
}


# --- tallies and the hourly chart (the overview's, through activity.py) ----------


@dataclass(frozen=True)
class Tally:
    value: str
    label: str
    count: int
    badge: str = ""


@dataclass(frozen=True)
class HourBucket:
    start: datetime
    pushes: int
    pulls: int
    failures: int


def connection_state_counts() -> dict[str, int]:
    # From sellers (left join): a seller without a connection row counts as not connected.
    counts = {state: 0 for state in ConnState.values}
    for row in Seller.objects.order_by().values("connection__state").annotate(n=Count("id")):
        counts[row["connection__state"] or ConnState.NOT_CONNECTED] += row["n"]
    return counts


def connection_tallies(counts: dict[str, int]) -> tuple[list[Tally], int]:
    tallies = [
        Tally(state, ConnState(state).label, counts[state], CONNECTION_BADGES[state])
        for state in (
            ConnState.CONNECTED,
            ConnState.NEEDS_REAUTH,
            ConnState.DISCONNECTED,
            ConnState.NOT_CONNECTED,
        )
    ]
    return tallies, sum(counts.values())


def sync_status_tallies(*, seller_id: int | None = None) -> list[Tally]:
    rows = OrderSync.objects.order_by()
    if seller_id is not None:
        rows = rows.filter(order__seller_id=seller_id)
    counts = {status: 0 for status in SyncStatus.values}
    for row in rows.values("status").annotate(n=Count("id")):
        counts[row["status"]] = row["n"]
    order = (
        SyncStatus.SYNCED,
        SyncStatus.PENDING,
        SyncStatus.RETRYING,
        SyncStatus.WAITING_FOR_CONNECTION,
        SyncStatus.FAILED,
    )
    return [Tally(s, SyncStatus(s).label, counts[s], SYNC_BADGES[s]) for s in order]


def is_failed_call() -> Q:
    # No answer at all (timeout, connection error) or an error status.
    return Q(status__isnull=True) | Q(status__gte=400)


def calls_per_hour(*, now: datetime, hours: int = CHART_HOURS) -> list[HourBucket]:
    """Pushes (PUT), pulls (GET) and failed calls per hour: ONE grouped query, then the
    empty hours filled in here so the chart always has ``hours`` bars."""
    current = now.replace(minute=0, second=0, microsecond=0)
    start = current - timedelta(hours=hours - 1)
    rows = (
        PlatformCall.objects.filter(created_at__gte=start)
        .order_by()
        .annotate(hour=TruncHour("created_at"))
        .values("hour")
        .annotate(
            pushes=Count("id", filter=Q(method="PUT")),
            pulls=Count("id", filter=Q(method="GET")),
            failures=Count("id", filter=is_failed_call()),
        )
    )
    by_hour = {row["hour"]: row for row in rows}
    buckets = []
    for index in range(hours):
        hour = start + timedelta(hours=index)
        row: Mapping[str, Any] = by_hour.get(hour, {})
        buckets.append(
            HourBucket(
                start=hour,
                pushes=row.get("pushes", 0),
                pulls=row.get("pulls", 0),
                failures=row.get("failures", 0),
            )
        )
    return buckets


# --- sellers ---------------------------------------------------------------------------

SELLER_SORTS: dict[str, tuple[Any, ...]] = {
    "name": ("display_name", "id"),
    "-name": ("-display_name", "-id"),
    "state": ("conn_state", "display_name", "id"),
    "-state": ("-conn_state", "display_name", "id"),
    "failures": ("failures", "display_name", "id"),
    "-failures": ("-failures", "display_name", "id"),
    "last_pull": (F("last_pull").asc(nulls_first=True), "display_name", "id"),
    "-last_pull": (F("last_pull").desc(nulls_last=True), "display_name", "id"),
    # By each performance measure (marketplace/performance): "-late_shipment" worst first.
    **performance.seller_sorts(),
}


def seller_list(
    *,
    search: str = "",
    state: str = "",
    has_failures: bool = False,
    sort: str = "name",
    flagged: str = "",
) -> QuerySet[Seller]:
    """Sellers with their connection state, failed-push count, order count and last pull."""
    sellers = Seller.objects.select_related("user", "connection", "sync").annotate(
        conn_state=Coalesce(F("connection__state"), Value(ConnState.NOT_CONNECTED)),
        last_pull=F("sync__last_success_at"),
        failures=count_subquery(
            OrderSync.objects.filter(order__seller=OuterRef("pk"), status=SyncStatus.FAILED),
            "order__seller",
        ),
        orders_total=count_subquery(Order.objects.filter(seller=OuterRef("pk")), "seller"),
    )
    if search:
        sellers = sellers.filter(
            Q(display_name__icontains=search)
            | Q(user__username__icontains=search)
            | Q(platform_username__icontains=search)
        )
    if state:
        sellers = sellers.filter(conn_state=state)
    if has_failures:
        sellers = sellers.filter(failures__gt=0)
    # Their performance figures, and only those over a measure's limit if asked.
    sellers = performance.sellers_with_figures(sellers, sort=sort)
    if flagged:
        sellers = performance.sellers_flagged_on(sellers, flagged)
    return sellers.order_by(*SELLER_SORTS.get(sort, SELLER_SORTS["name"]))


def seller_get(*, seller_id: int) -> Seller | None:
    return Seller.objects.select_related("user", "connection", "sync").filter(pk=seller_id).first()


def seller_connection_events(*, seller_id: int, limit: int = 30) -> list[ConnectionEvent]:
    return list(
        ConnectionEvent.objects.filter(seller_id=seller_id)
        .select_related("actor")
        .order_by("-created_at", "-id")[:limit]
    )


def seller_recent_calls(*, seller_id: int, limit: int = RECENT_CALLS) -> list[PlatformCall]:
    return list(
        PlatformCall.objects.filter(seller_id=seller_id).order_by("-created_at", "-id")[:limit]
    )


def seller_reported_problems(*, seller_id: int, limit: int = 50) -> list[ValidationProblem]:
    """Problems we posted to the platform (or tried to: ``report_error`` says why not)."""
    return list(
        ValidationProblem.objects.filter(order__seller_id=seller_id)
        .filter(Q(reported_at__isnull=False) | ~Q(report_error=""))
        .select_related("order")
        .order_by(F("reported_at").desc(nulls_first=True), "-id")[:limit]
    )


def staff_actions_for(
    *, seller_id: int | None = None, order_id: int | None = None, limit: int = 20
) -> list[StaffAction]:
    actions = StaffAction.objects.select_related("order")
    if seller_id is not None:
        actions = actions.filter(seller_id=seller_id)
    if order_id is not None:
        actions = actions.filter(order_id=order_id)
    return list(actions.order_by("-created_at", "-id")[:limit])


# --- orders ----------------------------------------------------------------------------


def order_get_for_staff(*, order_id: int) -> Order | None:
    return order_detail_queryset().select_related("seller__connection").filter(pk=order_id).first()


def order_calls(*, order: Order, limit: int = RECENT_CALLS) -> list[PlatformCall]:
    return list(
        PlatformCall.objects.filter(
            order_number=order.mp_order_number, seller_id=order.seller_id
        ).order_by("-created_at", "-id")[:limit]
    )


def order_history(*, order_id: int, limit: int = 100) -> list[SyncEvent]:
    return list(SyncEvent.objects.filter(order_id=order_id).order_by("-created_at", "-id")[:limit])
