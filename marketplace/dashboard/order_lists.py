"""The staff orders list: filters, sorting, the late flag and the order total, shared by
the page and its CSV export (so the export holds exactly what the filter shows).

Reads stay bounded: the page reads its 25 orders, their sync rows and sellers in one
query and their lines in one more (the total is summed from them); the export reads the
same query in chunks (``iterator(chunk_size=…)`` with the lines prefetched per chunk), so
a large export holds one chunk in memory at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import BooleanField, Case, F, Prefetch, Q, QuerySet, Value, When

from marketplace.order_money import order_total
from marketplace.orders.models import MarketplaceState, Order, OrderLine
from marketplace.orders.selectors import open_problems_count, order_list, with_open_problems

EXPORT_CHUNK = 500
OPEN_STATES = (MarketplaceState.PENDING, MarketplaceState.AWAITING_SHIPMENT)

# Sort key → ORDER BY (the id last, so equal values keep one order across pages).
ORDER_SORTS: dict[str, tuple[Any, ...]] = {
    "placed": ("purchase_date", "id"),
    "-placed": ("-purchase_date", "-id"),
    "ship_by": (F("latest_ship_date").asc(nulls_last=True), "id"),
    "-ship_by": (F("latest_ship_date").desc(nulls_last=True), "-id"),
    "number": ("mp_order_number",),
    "-number": ("-mp_order_number",),
    "seller": ("seller__display_name", "-purchase_date", "-id"),
    "-seller": ("-seller__display_name", "-purchase_date", "-id"),
    "buyer": ("customer_full_name", "-purchase_date", "-id"),
    "-buyer": ("-customer_full_name", "-purchase_date", "-id"),
}
DEFAULT_SORT = "-placed"


@dataclass(frozen=True)
class OrderFilters:
    search: str = ""  # order number or buyer name
    state: str = ""
    sync_status: str = ""
    seller_id: int | None = None
    seller_name: str = ""
    placed_from: date | None = None
    placed_to: date | None = None  # inclusive: the whole day
    late: bool = False
    has_problems: bool = False
    sort: str = DEFAULT_SORT


def late_condition(now: datetime) -> Q:
    """Late: still to ship (pending or awaiting shipment) and its ship-by date has passed."""
    return Q(state__in=OPEN_STATES, latest_ship_date__lt=now)


def _day_start(day: date) -> datetime:
    """Midnight of ``day`` in the marketplace's zone (the dates staff pick are theirs)."""
    return datetime.combine(day, time.min, tzinfo=ZoneInfo(settings.MARKETPLACE_TIME_ZONE))


def order_list_for_staff(*, filters: OrderFilters, now: datetime) -> QuerySet[Order]:
    """Orders as the filters say, sorted, each with ``open_problems`` and ``is_late``."""
    orders = order_list(seller_id=filters.seller_id, sync_status=filters.sync_status or None)
    orders = orders.annotate(
        open_problems=open_problems_count(),
        is_late=Case(
            When(late_condition(now), then=Value(True)),
            default=Value(False),
            output_field=BooleanField(),
        ),
    )
    if filters.search:
        orders = orders.filter(
            Q(mp_order_number__icontains=filters.search)
            | Q(customer_full_name__icontains=filters.search)
        )
    if filters.seller_name:
        orders = orders.filter(seller__display_name__icontains=filters.seller_name)
    if filters.state:
        orders = orders.filter(state=filters.state)
    if filters.placed_from:
        orders = orders.filter(purchase_date__gte=_day_start(filters.placed_from))
    if filters.placed_to:
        orders = orders.filter(purchase_date__lt=_day_start(filters.placed_to + timedelta(days=1)))
    if filters.late:
        orders = orders.filter(late_condition(now))
    if filters.has_problems:
        orders = with_open_problems(orders)
    return orders.order_by(*ORDER_SORTS.get(filters.sort, ORDER_SORTS[DEFAULT_SORT]))


def with_lines(orders: QuerySet[Order]) -> QuerySet[Order]:
    """The lines too (one query per page or chunk), for the order's total."""
    return orders.prefetch_related(Prefetch("lines", queryset=OrderLine.objects.order_by("id")))


CSV_HEADER = (
    "order",
    "seller",
    "buyer",
    "placed",
    "ship_by",
    "late",
    "total",
    "currency",
    "state",
    "sync",
    "open_problems",
)


def _moment(value: datetime | None) -> str:
    # ISO 8601 in the marketplace's zone with its offset: a person reads their own clock,
    # a script reads the same instant.
    if value is None:
        return ""
    return value.astimezone(ZoneInfo(settings.MARKETPLACE_TIME_ZONE)).isoformat(timespec="minutes")


def orders_csv_rows(orders: QuerySet[Order]) -> Iterator[tuple[str, ...]]:
    """The header, then one row per order of ``orders`` (read in chunks)."""
    yield CSV_HEADER
    for order in with_lines(orders).iterator(chunk_size=EXPORT_CHUNK):
        sync = getattr(order, "sync", None)
        yield (
            order.mp_order_number,
            order.seller.display_name,
            order.customer_full_name,
            _moment(order.purchase_date),
            _moment(order.latest_ship_date),
            "yes" if getattr(order, "is_late", False) else "no",
            str(order_total(order)),
            order.currency,
            order.get_state_display(),
            sync.get_status_display() if sync else "",
            str(getattr(order, "open_problems", 0)),
        )
