"""Reads for the pages and /metrics: the stored figures, their trend, and the orders
behind a figure (found with the refresh's own SQL, so the list and the number agree)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, Exists, F, Max, OuterRef, QuerySet, Subquery

from marketplace.orders.models import Order
from marketplace.performance import statements
from marketplace.performance.measures import BY_KEY, MEASURES, WINDOWS, Measure
from marketplace.performance.models import Crossing, Scorecard
from marketplace.performance.refresh import moment_at
from marketplace.returns.models import Return, SellerRefund


def latest_day() -> date | None:
    day: date | None = Scorecard.objects.aggregate(day=Max("day"))["day"]
    return day


@dataclass(frozen=True)
class Figure:
    measure: Measure
    value: float | None
    numerator: Any
    denominator: Any
    over: bool  # judged over the threshold (on the flag window, with enough sample)
    flagged: bool  # an open crossing (on the flag window)

    @property
    def threshold(self) -> float:
        return self.measure.threshold


def _numerator(card: Scorecard, measure: Measure) -> Any:
    if measure.numerator == "tracking_valid":
        return card.shipped - card.tracking_invalid
    return getattr(card, measure.numerator) if measure.numerator else None


def figures(card: Scorecard, *, flagged: set[str]) -> list[Figure]:
    """Every measure of one stored row."""
    judged = card.window_days == int(settings.PERFORMANCE_FLAG_WINDOW_DAYS)
    rows = []
    for measure in MEASURES:
        value = getattr(card, measure.field)
        value = float(value) if value is not None else None
        sample_ok = not measure.sample or getattr(card, measure.sample) >= int(
            settings.PERFORMANCE_MIN_SAMPLE
        )
        rows.append(
            Figure(
                measure=measure,
                value=value,
                numerator=_numerator(card, measure),
                denominator=getattr(card, measure.denominator) if measure.denominator else None,
                over=judged and sample_ok and measure.is_over(value),
                flagged=judged and measure.key in flagged,
            )
        )
    return rows


@dataclass(frozen=True)
class SellerScorecard:
    day: date | None
    cards: dict[int, Scorecard]  # by window
    flagged: set[str]
    crossings: list[Crossing]

    def window(self, days: int) -> Scorecard | None:
        return self.cards.get(days)

    def figures(self, days: int) -> list[Figure]:
        card = self.cards.get(days)
        return figures(card, flagged=self.flagged) if card else []


def seller_scorecard(*, seller_id: int) -> SellerScorecard:
    """The seller's figures of the latest run, every window, and their open crossings."""
    day = Scorecard.objects.filter(seller_id=seller_id).aggregate(day=Max("day"))["day"]
    cards = (
        {card.window_days: card for card in Scorecard.objects.filter(seller_id=seller_id, day=day)}
        if day
        else {}
    )
    crossings = list(Crossing.objects.filter(seller_id=seller_id, cleared_at__isnull=True))
    return SellerScorecard(
        day=day, cards=cards, flagged={c.measure for c in crossings}, crossings=crossings
    )


def trend(
    *, seller_id: int, measure: Measure, window_days: int, days: int = 90
) -> list[tuple[date, float | None]]:
    """The measure's stored value of each day, oldest first (the days the job ran)."""
    rows = (
        Scorecard.objects.filter(seller_id=seller_id, window_days=window_days)
        .order_by("-day")
        .values_list("day", measure.field)[:days]
    )
    return [(day, float(value) if value is not None else None) for day, value in reversed(rows)]


# --- the orders behind a figure ------------------------------------------------------

ORDER_LISTS: dict[str, str] = {
    "late": "Shipped late, or still unshipped after the ship-by day",
    "invalid_tracking": "Tracking that failed our checks",
    "cancelled": "Cancelled by the seller",
    "refunded": "Refunded",
    "returned": "Returned",
    "paused": "With a refund the marketplace paused",
    "returns_overdue": "Returns waiting too long for authorization",
}
_FACT_CONDITIONS = {
    "late": statements.LATE,
    "invalid_tracking": "(f.first_shipped IS NOT NULL AND f.bad_tracking = 1)",
    "cancelled": "f.cancelled = 1",
}


def orders_behind(
    *, seller_id: int, kind: str, window_days: int, as_of: datetime
) -> QuerySet[Order]:
    """The seller's orders counted in the numerator ``kind`` of the figures computed at
    ``as_of`` (the row's computed_at) over ``window_days``."""
    if window_days not in WINDOWS or kind not in ORDER_LISTS or kind == "returns_overdue":
        return Order.objects.none()
    moment = moment_at(as_of)
    since = moment.since(window_days)
    in_window = Order.objects.filter(
        seller_id=seller_id, purchase_date__gte=since, purchase_date__lt=as_of
    )
    if kind in _FACT_CONDITIONS:
        ctes, params = statements.order_facts_ctes(connection, moment, seller_id=seller_id)
        with connection.cursor() as cursor:
            cursor.execute(f"WITH {ctes} SELECT f.id FROM f WHERE {_FACT_CONDITIONS[kind]}", params)  # noqa: S608
            ids = [row[0] for row in cursor.fetchall()]
        orders = in_window.filter(pk__in=ids)
    elif kind == "refunded":
        orders = in_window.filter(Exists(SellerRefund.objects.filter(order=OuterRef("pk"))))
    elif kind == "paused":
        orders = in_window.filter(
            Exists(SellerRefund.objects.filter(order=OuterRef("pk"), pause_count__gt=0))
        )
    else:  # returned
        orders = in_window.filter(Exists(Return.objects.filter(order=OuterRef("pk"))))
    return orders.order_by("-purchase_date", "-id")


def returns_overdue(*, seller_id: int, window_days: int, as_of: datetime) -> QuerySet[Return]:
    moment = moment_at(as_of)
    return (
        Return.objects.filter(
            seller_id=seller_id,
            status="AWAITING_AUTHORIZATION",
            decision="",
            request_date__gte=moment.since(window_days).date(),
            request_date__lt=moment.overdue_before,
        )
        .select_related("order")
        .order_by("request_date", "id")
    )


# --- the staff sellers list and /metrics ---------------------------------------------

# The measures the staff sellers list shows as columns (every measure sorts and filters).
LIST_COLUMNS = ("late_shipment", "valid_tracking", "seller_cancel", "refund_rate")


def seller_sorts() -> dict[str, tuple[Any, ...]]:
    """Sort keys of the sellers list: ``<measure>`` worst last, ``-<measure>`` worst first
    (for a "below" measure such as valid tracking, worst is lowest); no figure sorts last."""
    sorts: dict[str, tuple[Any, ...]] = {}
    for measure in MEASURES:
        name = f"perf_{measure.key}"
        up = (F(name).asc(nulls_last=True), "display_name", "id")
        down = (F(name).desc(nulls_last=True), "display_name", "id")
        worst_first = down if measure.bad == "above" else up
        best_first = up if measure.bad == "above" else down
        sorts[f"-{measure.key}"] = worst_first
        sorts[measure.key] = best_first
    return sorts


def sellers_with_figures(sellers: QuerySet[Any], *, sort: str = "") -> QuerySet[Any]:
    """``sellers`` annotated with their latest flag-window figures of the list's columns
    and of the sort's measure (``perf_<key>``), and their open crossings (``perf_flags``).
    Every seller gets a row per run, so their latest row is the latest run's; no extra
    query: correlated subqueries over the (seller, window, day) index."""
    window = int(settings.PERFORMANCE_FLAG_WINDOW_DAYS)
    row = Scorecard.objects.filter(seller=OuterRef("pk"), window_days=window).order_by("-day")
    keys = {*LIST_COLUMNS, sort.lstrip("-")} & BY_KEY.keys()
    annotations: dict[str, Any] = {
        f"perf_{key}": Subquery(row.values(BY_KEY[key].field)[:1]) for key in keys
    }
    annotations["perf_flags"] = Subquery(
        Crossing.objects.filter(seller=OuterRef("pk"), cleared_at__isnull=True)
        .values("seller")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    annotated: QuerySet[Any, Any] = sellers.annotate(**annotations)
    return annotated


FLAG_CHOICES = [("any", "Over any limit"), *((m.key, m.label) for m in MEASURES)]


def sellers_flagged_on(sellers: QuerySet[Any], measure_key: str) -> QuerySet[Any]:
    """Only the sellers with an open crossing of ``measure_key`` ("any": of any measure)."""
    crossings = Crossing.objects.filter(seller=OuterRef("pk"), cleared_at__isnull=True)
    if measure_key != "any":
        crossings = crossings.filter(measure=measure_key)
    return sellers.filter(Exists(crossings))


def sellers_over_threshold_counts() -> dict[str, int]:
    """Sellers with an open crossing, by measure (every measure, 0 included)."""
    counts = dict(
        Crossing.objects.filter(cleared_at__isnull=True)
        .values_list("measure")
        .annotate(n=Count("pk"))
        .values_list("measure", "n")
    )
    return {measure.key: int(counts.get(measure.key, 0)) for measure in MEASURES}


def last_refresh_at() -> datetime | None:
    """When the latest run computed its rows (a run rewrites all of its day's rows, so
    any row of the latest day tells): one probe of the day index."""
    return Scorecard.objects.order_by("-day").values_list("computed_at", flat=True).first()


def measure_of(key: str) -> Measure | None:
    return BY_KEY.get(key)
