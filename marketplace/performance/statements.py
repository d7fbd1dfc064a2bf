"""The refresh's SQL: one statement per measure family, for every seller at once.

Each family is an ``UPDATE scorecard ... FROM (aggregate)`` over the rows the run has
just inserted for the day (``refresh.py``). The aggregates read only what falls in the
longest window: orders by ``purchase_date`` (index ``order_placed_recent``), returns by
``request_date`` (``return_request_date``), feed runs by status and ``received_at``
(``feedrun_status_idx``); an order's shipments, cancellations, problems, refunds and
returns are reached through their ``order``/``line`` foreign-key indexes. So a run costs
what the window holds, not what history holds.

The three windows come from one derived table joined on the row's date, so each family
scans its rows once. Postgres and SQLite differ in three places, kept in ``Dialect``:
the UTC calendar day of a timestamp, days between two dates, and percentiles (Postgres's
``percentile_cont``; on SQLite the same interpolation from window functions).
"""

# Every interpolated name is a model's table or a constant of this module; every value
# is a query parameter.
# ruff: noqa: S608
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from marketplace.catalog.models import FeedRun
from marketplace.orders.models import (
    LineCancellation,
    MarketplaceState,
    Order,
    OrderLine,
    Shipment,
    ValidationProblem,
)
from marketplace.orders.validation import ProblemCode
from marketplace.performance.measures import WINDOWS
from marketplace.performance.models import Scorecard
from marketplace.returns.models import (
    Return,
    ReturnLine,
    ReturnStatus,
    SellerRefund,
    SellerRefundLine,
)
from sellers.models import Seller

# A carrier or tracking number that failed our checks (marketplace/orders/validation.py).
TRACKING_CODES = (ProblemCode.INVALID_TRACKING_NUMBER, ProblemCode.UNKNOWN_CARRIER)
# Feed runs whose rows were judged (a failed run refused its file, not its rows).
JUDGED_RUNS = (FeedRun.Status.SUCCEEDED, FeedRun.Status.HELD)


def _t(model: Any) -> str:
    return str(model._meta.db_table)


@dataclass(frozen=True)
class Dialect:
    vendor: str

    def day_of(self, expr: str) -> str:
        """The UTC calendar day of a timestamp column, comparable with a DateField."""
        if self.vendor == "postgresql":
            return f"(({expr}) AT TIME ZONE 'UTC')::date"
        return f"date({expr})"

    def plus_days(self, expr: str, days: int) -> str:
        if self.vendor == "postgresql":
            return f"({expr} + make_interval(days => {int(days)}))"
        return f"datetime({expr}, '+{int(days)} days')"

    def days_between(self, later: str, earlier: str) -> str:
        """Whole days from date ``earlier`` to date ``later``."""
        if self.vendor == "postgresql":
            return f"({later} - {earlier})"
        return f"CAST(julianday({later}) - julianday({earlier}) AS INTEGER)"


@dataclass(frozen=True)
class Moment:
    """The run's clock and its windows, as parameters adapted for the database."""

    now: datetime
    day: date
    handling_days: int
    overdue_before: date  # returns requested before this day are overdue

    def since(self, days: int) -> datetime:
        return self.now - timedelta(days=days)


def windows_sql(
    connection: BaseDatabaseWrapper, moment: Moment, *, dates: bool
) -> tuple[str, list[Any]]:
    """``(SELECT 7 AS days, <since> AS since UNION ALL ...)``: one row per window."""
    ops = connection.ops
    parts, params = [], []
    for index, days in enumerate(WINDOWS):
        since = moment.since(days)
        value = (
            ops.adapt_datefield_value(since.date())
            if dates
            else ops.adapt_datetimefield_value(since)
        )
        parts.append(f"SELECT {days} AS days, %s AS since" if index == 0 else f"SELECT {days}, %s")
        params.append(value)
    return "(" + " UNION ALL ".join(parts) + ")", params


def order_facts_ctes(
    connection: BaseDatabaseWrapper, moment: Moment, *, seller_id: int | None = None
) -> tuple[str, list[Any]]:
    """Common table expressions ending in ``f``: one row per order placed in the longest
    window, with the facts every shipping measure counts. ``seller_id`` narrows it to one
    seller (the lists of orders behind a figure, which must agree with the figure).

    ``o1`` is MATERIALIZED: each order's correlated look-ups (its first shipment, its
    tracking problems, its cancellations) run once, however many times the measures name
    their result (inlined, Postgres repeated the first-shipment look-up per mention)."""
    d = Dialect(connection.vendor)
    ops = connection.ops
    q = connection.ops.quote_name
    ship_by_day = d.day_of(
        f"COALESCE(o.latest_ship_date, {d.plus_days('o.purchase_date', moment.handling_days)})"
    )
    first_shipped = (
        f"(SELECT MIN(s.shipped_date) FROM {_t(Shipment)} s JOIN {_t(OrderLine)} l "
        f"ON l.id = s.line_id WHERE l.order_id = o.id)"
    )
    codes = ", ".join(f"'{code}'" for code in TRACKING_CODES)
    # "(SELECT 1 ... LIMIT 1) IS NOT NULL", not EXISTS: Postgres may turn an EXISTS into
    # one hashed scan of the whole table (every problem, every order line of all
    # history); a scalar subquery stays an index probe per order of the window.
    bad_tracking = (
        f"CASE WHEN (SELECT 1 FROM {_t(ValidationProblem)} p WHERE p.order_id = o.id "
        f"AND p.code IN ({codes}) LIMIT 1) IS NOT NULL THEN 1 ELSE 0 END"
    )
    cancelled = (
        f"CASE WHEN (SELECT 1 FROM {_t(LineCancellation)} c JOIN {_t(OrderLine)} l "
        f"ON l.id = c.line_id WHERE l.order_id = o.id LIMIT 1) IS NOT NULL THEN 1 ELSE 0 END"
    )
    seller_filter = "AND o.seller_id = %s" if seller_id is not None else ""
    inner = (
        f"SELECT o.id, o.seller_id, o.purchase_date, o.{q('state')} AS state, "
        f"{ship_by_day} AS ship_by_day, {d.day_of('o.purchase_date')} AS placed_day, "
        f"{first_shipped} AS first_shipped, {bad_tracking} AS bad_tracking, "
        f"{cancelled} AS cancelled "
        f"FROM {_t(Order)} o WHERE o.purchase_date >= %s AND o.purchase_date < %s {seller_filter}"
    )
    params: list[Any] = [
        ops.adapt_datetimefield_value(moment.since(max(WINDOWS))),
        ops.adapt_datetimefield_value(moment.now),
    ]
    if seller_id is not None:
        params.append(seller_id)
    # Overdue: not shipped, still to ship, and its ship-by day is over.
    awaiting = MarketplaceState.AWAITING_SHIPMENT.value
    ctes = (
        f"o1 AS MATERIALIZED ({inner}), "
        f"f AS (SELECT o1.*, "
        f"CASE WHEN o1.first_shipped IS NULL AND o1.state = '{awaiting}' "
        f"AND o1.ship_by_day < %s THEN 1 ELSE 0 END AS overdue, "
        f"CASE WHEN o1.first_shipped IS NOT NULL THEN "
        f"{d.days_between('o1.first_shipped', 'o1.placed_day')} END AS ship_days "
        f"FROM o1)"
    )
    return ctes, [*params, ops.adapt_datefield_value(moment.day)]


LATE = "(f.overdue = 1 OR f.first_shipped > f.ship_by_day)"


def shipping_select(connection: BaseDatabaseWrapper, moment: Moment) -> tuple[str, list[Any]]:
    """Per seller and window: orders, shipping due/late, tracking, cancellations, and the
    median and 90th percentile of days to the first shipment."""
    ctes, facts_params = order_facts_ctes(connection, moment)
    windows, window_params = windows_sql(connection, moment, dates=False)
    shipped = "f.first_shipped IS NOT NULL"
    counts = (
        "COUNT(*) AS orders, "
        f"SUM(CASE WHEN {shipped} OR f.overdue = 1 THEN 1 ELSE 0 END) AS ship_due, "
        f"SUM(CASE WHEN {LATE} THEN 1 ELSE 0 END) AS shipped_late, "
        f"SUM(CASE WHEN {shipped} THEN 1 ELSE 0 END) AS shipped, "
        f"SUM(CASE WHEN {shipped} THEN f.bad_tracking ELSE 0 END) AS tracking_invalid, "
        "SUM(f.cancelled) AS seller_cancelled"
    )
    if connection.vendor == "postgresql":
        sql = (
            f"WITH {ctes} SELECT f.seller_id, w.days, {counts}, "
            "percentile_cont(0.5) WITHIN GROUP (ORDER BY f.ship_days) AS ship_days_median, "
            "percentile_cont(0.9) WITHIN GROUP (ORDER BY f.ship_days) AS ship_days_p90 "
            f"FROM f JOIN {windows} w ON f.purchase_date >= w.since "
            "GROUP BY f.seller_id, w.days"
        )
        return sql, [*facts_params, *window_params]
    # SQLite has no percentile_cont: rank the shipped orders of each seller and window.
    ranked = (
        f"SELECT f.*, w.days, {_sqlite_ranks('f.ship_days')} "
        f"FROM f JOIN {windows} w ON f.purchase_date >= w.since "
        "WINDOW part AS (PARTITION BY f.seller_id, w.days)"
    )
    sql = (
        f"WITH {ctes} SELECT r.seller_id, r.days, {counts.replace('f.', 'r.')}, "
        f"{_sqlite_percentile('r.ship_days', 0.5)} AS ship_days_median, "
        f"{_sqlite_percentile('r.ship_days', 0.9)} AS ship_days_p90 "
        f"FROM ({ranked}) r GROUP BY r.seller_id, r.days"
    )
    return sql, [*facts_params, *window_params]


def _sqlite_ranks(column: str) -> str:
    """``n`` (the non-NULL values of ``column`` in the row's seller and window: the
    ``WINDOW part`` of the query) and ``rank0`` (the row's 0-based rank among them; NULLs
    sort first on SQLite, so they are counted out)."""
    return (
        f"COUNT({column}) OVER part AS n, "
        f"ROW_NUMBER() OVER (part ORDER BY {column}) - 1 "
        f"- (COUNT(*) OVER part - COUNT({column}) OVER part) AS rank0"
    )


def _sqlite_percentile(column: str, p: float) -> str:
    """Postgres's ``percentile_cont(p)`` over ranked rows (``_sqlite_ranks``): the
    interpolation between the two ranks around (n - 1) * p; NULL when n is 0."""
    pos = f"((r.n - 1) * {p})"
    low = f"CAST({pos} AS INTEGER)"
    frac = f"({pos} - {low})"
    return (
        f"CASE WHEN MAX(r.n) > 0 THEN SUM(CASE WHEN {column} IS NULL THEN 0 "
        f"WHEN r.rank0 = {low} THEN {column} * (1 - {frac}) "
        f"WHEN r.rank0 = {low} + 1 THEN {column} * {frac} ELSE 0 END) END"
    )


def after_sale_select(connection: BaseDatabaseWrapper, moment: Moment) -> tuple[str, list[Any]]:
    """Per seller and window: the window's orders' value, refunds (count, money, paused)
    and returns (count, money requested)."""
    ops = connection.ops
    windows, window_params = windows_sql(connection, moment, dates=False)
    amount = (
        "COALESCE(rl.item_refund, 0) + COALESCE(rl.item_tax_refund, 0) "
        "+ COALESCE(rl.shipping_refund, 0) + COALESCE(rl.shipping_tax_refund, 0) "
        "- COALESCE(rl.discount_refund, 0)"
    )
    facts = (
        "SELECT o.id, o.seller_id, o.purchase_date, "
        f"(SELECT COALESCE(SUM(l.quantity * l.unit_price + l.shipping_price), 0) "
        f"FROM {_t(OrderLine)} l WHERE l.order_id = o.id) AS order_amount, "
        f"(SELECT COUNT(*) FROM {_t(SellerRefund)} r WHERE r.order_id = o.id) AS refunds, "
        f"(SELECT COUNT(*) FROM {_t(SellerRefund)} r WHERE r.order_id = o.id "
        "AND r.pause_count > 0) AS paused, "
        f"(SELECT COALESCE(SUM({amount}), 0) FROM {_t(SellerRefundLine)} rl "
        f"JOIN {_t(SellerRefund)} r ON r.id = rl.refund_id WHERE r.order_id = o.id) "
        "AS refund_amount, "
        f"(SELECT COUNT(*) FROM {_t(Return)} rt WHERE rt.order_id = o.id) AS returns, "
        "(SELECT COALESCE(SUM(rl.requested_refund_principal + rl.requested_refund_tax), 0) "
        f"FROM {_t(ReturnLine)} rl JOIN {_t(Return)} rt ON rt.id = rl.return_request_id "
        "WHERE rt.order_id = o.id) AS return_amount "
        f"FROM {_t(Order)} o WHERE o.purchase_date >= %s AND o.purchase_date < %s"
    )
    sql = (
        "SELECT f.seller_id, w.days, COUNT(*) AS orders_n, "
        "SUM(f.order_amount) AS order_amount, "
        "SUM(CASE WHEN f.refunds > 0 THEN 1 ELSE 0 END) AS refunded_orders, "
        "SUM(f.refunds) AS refunds, SUM(f.paused) AS refunds_paused, "
        "SUM(f.refund_amount) AS refund_amount, "
        "SUM(CASE WHEN f.returns > 0 THEN 1 ELSE 0 END) AS returned_orders, "
        "SUM(f.return_amount) AS return_amount "
        f"FROM f JOIN {windows} w ON f.purchase_date >= w.since "
        "GROUP BY f.seller_id, w.days"
    )
    # MATERIALIZED: each order's look-ups run once (refunds and returns are each named twice).
    sql = f"WITH f AS MATERIALIZED ({facts}) {sql}"
    params = [
        ops.adapt_datetimefield_value(moment.since(max(WINDOWS))),
        ops.adapt_datetimefield_value(moment.now),
        *window_params,
    ]
    return sql, params


def returns_select(connection: BaseDatabaseWrapper, moment: Moment) -> tuple[str, list[Any]]:
    """Per seller and window, of the returns requested in it: those still awaiting
    authorization, those overdue and the oldest one's request day; and of those the seller
    authorized (``authorized_at``), how many, and the median and 90th percentile of the
    days they waited (request day to the UTC day a pull first saw them authorized)."""
    ops = connection.ops
    d = Dialect(connection.vendor)
    windows, window_params = windows_sql(connection, moment, dates=True)
    facts = (
        "SELECT rt.seller_id, rt.request_date, "
        "CASE WHEN rt.status = %s AND rt.decision = '' THEN 1 ELSE 0 END AS waiting, "
        "CASE WHEN rt.authorized_at IS NOT NULL THEN "
        f"{d.days_between(d.day_of('rt.authorized_at'), 'rt.request_date')} END AS wait_days "
        f"FROM {_t(Return)} rt WHERE rt.request_date >= %s"
    )

    def counts(t: str) -> str:
        return (
            f"SUM({t}.waiting) AS returns_waiting, "
            f"SUM(CASE WHEN {t}.waiting = 1 AND {t}.request_date < %s THEN 1 ELSE 0 END) "
            "AS returns_overdue, "
            f"MIN(CASE WHEN {t}.waiting = 1 THEN {t}.request_date END) "
            "AS oldest_waiting_request, "
            f"COUNT({t}.wait_days) AS returns_authorized"
        )

    joined = f"FROM rf JOIN {windows} w ON rf.request_date >= w.since"
    if connection.vendor == "postgresql":
        sql = (
            f"SELECT rf.seller_id, w.days, {counts('rf')}, "
            "percentile_cont(0.5) WITHIN GROUP (ORDER BY rf.wait_days) "
            "AS authorization_days_median, "
            "percentile_cont(0.9) WITHIN GROUP (ORDER BY rf.wait_days) "
            f"AS authorization_days_p90 {joined} GROUP BY rf.seller_id, w.days"
        )
    else:
        ranked = (
            f"SELECT rf.*, w.days, {_sqlite_ranks('rf.wait_days')} {joined} "
            "WINDOW part AS (PARTITION BY rf.seller_id, w.days)"
        )
        sql = (
            f"SELECT r.seller_id, r.days, {counts('r')}, "
            f"{_sqlite_percentile('r.wait_days', 0.5)} AS authorization_days_median, "
            f"{_sqlite_percentile('r.wait_days', 0.9)} AS authorization_days_p90 "
            f"FROM ({ranked}) r GROUP BY r.seller_id, r.days"
        )
    params = [
        ReturnStatus.AWAITING_AUTHORIZATION.value,
        ops.adapt_datefield_value(moment.since(max(WINDOWS)).date()),
        ops.adapt_datefield_value(moment.overdue_before),
        *window_params,
    ]
    return f"WITH rf AS ({facts}) {sql}", params


def listings_select(connection: BaseDatabaseWrapper, moment: Moment) -> tuple[str, list[Any]]:
    """Per seller and window: judged feed runs received in it, their rows and refusals."""
    ops = connection.ops
    q = ops.quote_name
    windows, window_params = windows_sql(connection, moment, dates=False)
    statuses = ", ".join(f"'{status}'" for status in JUDGED_RUNS)
    sql = (
        f"SELECT fr.seller_id, w.days, COUNT(*) AS feed_runs, SUM(fr.{q('rows')}) AS listing_rows, "
        "SUM(fr.rejected) AS listing_refused "
        f"FROM {_t(FeedRun)} fr JOIN {windows} w ON fr.received_at >= w.since "
        f"WHERE fr.{q('status')} IN ({statuses}) AND fr.received_at >= %s AND fr.received_at < %s "
        "GROUP BY fr.seller_id, w.days"
    )
    params = [
        *window_params,
        ops.adapt_datetimefield_value(moment.since(max(WINDOWS))),
        ops.adapt_datetimefield_value(moment.now),
    ]
    return sql, params


def _rate(numerator: str, denominator: str) -> str:
    return f"CASE WHEN {denominator} > 0 THEN 1.0 * {numerator} / {denominator} END"


# Each family: its SELECT, the columns it sets, and the rates computed from them.
FAMILIES: dict[str, tuple[Any, tuple[str, ...], dict[str, str]]] = {
    "shipping": (
        shipping_select,
        (
            "orders",
            "ship_due",
            "shipped_late",
            "shipped",
            "tracking_invalid",
            "seller_cancelled",
            "ship_days_median",
            "ship_days_p90",
        ),
        {
            "late_rate": _rate("a.shipped_late", "a.ship_due"),
            "valid_tracking_rate": _rate("(a.shipped - a.tracking_invalid)", "a.shipped"),
            "cancel_rate": _rate("a.seller_cancelled", "a.orders"),
        },
    ),
    "after_sale": (
        after_sale_select,
        (
            "order_amount",
            "refunded_orders",
            "refunds",
            "refunds_paused",
            "refund_amount",
            "returned_orders",
            "return_amount",
        ),
        {
            "refund_rate": _rate("a.refunded_orders", "a.orders_n"),
            "refund_amount_rate": _rate("a.refund_amount", "a.order_amount"),
            "paused_refund_rate": _rate("a.refunds_paused", "a.refunds"),
            "return_rate": _rate("a.returned_orders", "a.orders_n"),
            "return_amount_rate": _rate("a.return_amount", "a.order_amount"),
        },
    ),
    "returns": (
        returns_select,
        (
            "returns_waiting",
            "returns_overdue",
            "oldest_waiting_request",
            "returns_authorized",
            "authorization_days_median",
            "authorization_days_p90",
        ),
        {},
    ),
    "listings": (
        listings_select,
        ("feed_runs", "listing_rows", "listing_refused"),
        {"listing_refusal_rate": _rate("a.listing_refused", "a.listing_rows")},
    ),
}


def family_update(
    connection: BaseDatabaseWrapper, moment: Moment, family: str
) -> tuple[str, list[Any]]:
    """``UPDATE scorecard SET <family's columns> FROM (<its aggregate>) WHERE <the day's row>``."""
    select, columns, rates = FAMILIES[family]
    inner, params = select(connection, moment)
    sets = [f"{column} = a.{column}" for column in columns]
    sets += [f"{column} = {expression}" for column, expression in rates.items()]
    sql = (
        f"UPDATE {_t(Scorecard)} SET {', '.join(sets)} FROM ({inner}) a "
        f"WHERE {_t(Scorecard)}.seller_id = a.seller_id "
        f"AND {_t(Scorecard)}.window_days = a.days AND {_t(Scorecard)}.day = %s"
    )
    return sql, [*params, connection.ops.adapt_datefield_value(moment.day)]


def day_rows_insert(connection: BaseDatabaseWrapper, moment: Moment) -> tuple[str, list[Any]]:
    """A zero row per seller and window for the run's day (every seller has a row: one
    without orders reads 0 orders, not yesterday's figures)."""
    ops = connection.ops
    windows = " UNION ALL ".join(
        f"SELECT {days} AS days" if i == 0 else f"SELECT {days}" for i, days in enumerate(WINDOWS)
    )
    sql = (
        f"INSERT INTO {_t(Scorecard)} (seller_id, window_days, day, computed_at, orders, "
        "ship_due, shipped_late, shipped, tracking_invalid, seller_cancelled, order_amount, "
        "refunded_orders, refund_amount, refunds, refunds_paused, returned_orders, "
        "return_amount, returns_waiting, returns_overdue, returns_authorized, feed_runs, "
        "listing_rows, listing_refused) "
        f"SELECT s.id, w.days, %s, %s, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 "
        f"FROM {_t(Seller)} s CROSS JOIN ({windows}) w"
    )
    return sql, [ops.adapt_datefield_value(moment.day), ops.adapt_datetimefield_value(moment.now)]


def baseline_select(connection: BaseDatabaseWrapper, moment: Moment) -> tuple[str, list[Any]]:
    """The benchmark's yardstick: the same aggregates as one bare SELECT (every column
    summed, so no aggregate can be skipped), writing nothing."""
    parts, params = [], []
    for index, (select, columns, _rates) in enumerate(FAMILIES.values()):
        inner, inner_params = select(connection, moment)
        sums = ", ".join(
            f"{'MIN' if c == 'oldest_waiting_request' else 'SUM'}(a{index}.{c}) AS s{index}_{c}"
            for c in columns
        )
        parts.append(f"SELECT COUNT(*) AS n{index}, {sums} FROM ({inner}) a{index}")
        params += inner_params
    # One statement: the families' one-row sums side by side.
    sql = "SELECT * FROM " + " CROSS JOIN ".join(f"({p}) x{i}" for i, p in enumerate(parts))
    return sql, params
