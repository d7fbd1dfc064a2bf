"""P10 — seller scorecards: every seller's figures refreshed at once.

Data: ``sellers`` sellers and ``orders`` orders placed in the last 89 days (spread over
the sellers; one line each; 90 % shipped, a fifth without a ship window, 2 % with a
tracking problem, 1 % cancelled by the seller, 1 % refunded, 2 % returned, two thirds of
the returns authorized), one feed run per seller. Generated inside the database
(``INSERT ... SELECT`` over a number series), which is what makes a million orders quick
enough to set up.

Measured, alternating ``rounds`` times (median):

* the job: ``scorecards_refresh`` (the day's rows, one statement per measure family, the
  prune and the threshold crossings, in one transaction);
* the yardstick: the same aggregates as one bare SELECT (``statements.baseline_select``),
  writing nothing. Goal: the job within 1.5x of it.

Then ``history_factor`` x ``orders`` older orders (91 to 1000 days old, with their lines
and shipments) are added and the job measured again. Goal: at most 1.2x the time without
that history (it reads none of it).
"""

from __future__ import annotations

import statistics
import time
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from bench.harness import BenchEnvironment, log, sellers_create

WINDOW_SECONDS = 89 * 86400
HISTORY_OFFSET_SECONDS = 91 * 86400
HISTORY_SPAN_SECONDS = 900 * 86400


def _series(vendor: str, count: int) -> str:
    if vendor == "postgresql":
        return f"generate_series(1, {int(count)}) AS g(i)"
    return (
        "(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s "
        f"WHERE i < {int(count)}) SELECT i FROM s) g"
    )


def _ago(vendor: str, seconds_expr: str) -> str:
    """``%s`` (now) less ``seconds_expr`` seconds."""
    if vendor == "postgresql":
        return f"(%s::timestamptz - ({seconds_expr}) * interval '1 second')"
    return f"datetime(%s, '-' || ({seconds_expr}) || ' seconds')"


def _plus_days(vendor: str, expr: str, days_expr: str) -> str:
    if vendor == "postgresql":
        return f"({expr} + ({days_expr}) * interval '1 day')"
    return f"datetime({expr}, '+' || ({days_expr}) || ' days')"


def _not_after_now(vendor: str, expr: str) -> str:
    """``expr``, or now if it is later: a shipment is never dated in the future (the
    smoke's few orders all fall in the last hours, and which of them would otherwise count
    as shipped depended on the hour and on the first order id)."""
    if vendor == "postgresql":
        return f"LEAST({expr}, %s::timestamptz)"
    return f"MIN({expr}, datetime(%s))"


def _day(vendor: str, expr: str) -> str:
    return f"(({expr}) AT TIME ZONE 'UTC')::date" if vendor == "postgresql" else f"date({expr})"


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float | Decimal):
        return str(value)
    if isinstance(value, list | dict):
        return "'" + ("[]" if isinstance(value, list) else "{}") + "'"
    return "'" + str(value).replace("'", "''") + "'"


def _insert_select(
    model: Any,
    source: str,
    values: dict[str, str],
    *,
    where: str = "",
    params: list[Any] | None = None,
) -> int:
    """``INSERT INTO <model> (every column) SELECT <values, else each field's default>
    FROM <source> [WHERE ...]``; ``%s`` in a value is ``now``. Returns the rows inserted."""
    from django.db import connection
    from django.db.models.fields import NOT_PROVIDED
    from django.utils import timezone

    now = connection.ops.adapt_datetimefield_value(timezone.now())
    columns, exprs = [], []
    for field in model._meta.concrete_fields:
        if field.primary_key:
            continue
        if field.attname in values:
            expr = values[field.attname]
        elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            expr = "%s"
        elif field.default is not NOT_PROVIDED:
            expr = _literal(field.get_default())
        elif field.null:
            expr = "NULL"
        else:
            expr = "''"
        columns.append(connection.ops.quote_name(field.column))
        exprs.append(expr)
    # Modulo is written "a % b" above; with parameters, psycopg wants "%%".
    exprs = [expr.replace("% ", "%% ") for expr in exprs]
    source, where = source.replace("% ", "%% "), where.replace("% ", "%% ")
    select = ", ".join(exprs)
    sql = (
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) "
        f"SELECT {select} FROM {source} {where}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [now] * select.count("%s") + (params or []))
        inserted: int = cursor.rowcount
        return inserted


def orders_generate(
    *, vendor: str, first_seller: int, sellers: int, count: int, prefix: str, history: bool
) -> int:
    """``count`` orders with one line each, shipments, problems, cancellations, refunds
    and returns, all in SQL. Returns the first order id."""
    from django.db import connection, transaction
    from django.db.models import Max

    from marketplace.orders.models import (
        LineCancellation,
        Order,
        OrderLine,
        Shipment,
        ValidationProblem,
    )
    from marketplace.returns.models import Return, ReturnLine, SellerRefund, SellerRefundLine

    start = (Order.objects.aggregate(m=Max("id"))["m"] or 0) + 1
    offset = HISTORY_OFFSET_SECONDS if history else 0
    span = HISTORY_SPAN_SECONDS if history else WINDOW_SECONDS
    purchase = _ago(vendor, f"{offset} + (g.i * 37) % {span}")
    with transaction.atomic():
        _insert_select(
            Order,
            _series(vendor, count),
            {
                "mp_order_number": f"'{prefix}-' || g.i",
                "seller_id": f"{first_seller} + g.i % {sellers}",
                # 1 in 7 awaiting shipment: 7 divides no seller count in use, so every
                # seller has shipped orders (with % 10 and 50 sellers, 5 never shipped).
                "state": "CASE WHEN g.i % 100 = 3 THEN 'CANCELLED' "
                "WHEN g.i % 7 = 0 THEN 'AWAITING_SHIPMENT' ELSE 'SHIPPED' END",
                "sales_channel": "'EU'",
                "purchase_date": purchase,
                "currency": "'EUR'",
                "customer_full_name": "'Buyer'",
                "ship_full_name": "'Buyer'",
                "ship_address1": "'1 Bench Street'",
                "ship_city": "'Lyon'",
                "ship_country_code": "'FRA'",
                "latest_ship_date": f"CASE WHEN g.i % 5 = 0 THEN NULL ELSE "
                f"{_plus_days(vendor, purchase, '2')} END",
                "intake_fingerprint": "'fp' || g.i",
            },
        )
        o = f"(SELECT * FROM {Order._meta.db_table} WHERE id >= {start}) o"
        _insert_select(
            OrderLine,
            o,
            {
                "order_id": "o.id",
                "mp_line_number": "'1'",
                "sku": "'SKU'",
                "product_name": "'Product'",
                "quantity": "1 + o.id % 3",
                "unit_price": "19.90",
                "shipping_price": "4.50",
            },
        )
        lines = (
            f"(SELECT l.id AS line_id, o.id AS order_id, o.purchase_date, o.state "
            f"FROM {OrderLine._meta.db_table} l JOIN {Order._meta.db_table} o "
            f"ON o.id = l.order_id WHERE o.id >= {start}) x"
        )
        _insert_select(
            Shipment,
            lines,
            {
                "line_id": "x.line_id",
                "quantity": "1",
                "carrier": "'UPS'",
                "tracking_number": "'1Z999AA10123456784'",
                "shipped_date": _day(
                    vendor,
                    _not_after_now(vendor, _plus_days(vendor, "x.purchase_date", "x.order_id % 4")),
                ),
            },
            where="WHERE x.state = 'SHIPPED'",
        )
        _insert_select(
            ValidationProblem,
            lines,
            {
                "order_id": "x.order_id",
                "code": "'INVALID_TRACKING_NUMBER'",
                "message": "'bench'",
                "fingerprint": "'fp' || x.order_id",
                "last_seen_at": "%s",
                "first_seen_at": "%s",
            },
            where="WHERE x.state = 'SHIPPED' AND x.order_id % 50 = 7",
        )
        _insert_select(
            LineCancellation,
            lines,
            {"line_id": "x.line_id", "quantity": "1", "reason": "'out of stock'"},
            where="WHERE x.state = 'CANCELLED'",
        )
        _insert_select(
            SellerRefund,
            o,
            {
                "seller_id": "o.seller_id",
                "order_id": "o.id",
                "refund_id": "'' || o.id",
                "status": "'COMPLETE'",
                "pause_count": "CASE WHEN o.id % 300 = 11 THEN 1 ELSE 0 END",
            },
            where="WHERE o.id % 100 = 11",
        )
        refunds = (
            f"(SELECT r.id AS refund_id FROM {SellerRefund._meta.db_table} r "
            f"WHERE r.order_id >= {start}) r"
        )
        _insert_select(
            SellerRefundLine,
            refunds,
            {
                "refund_id": "r.refund_id",
                "mp_line_number": "'1'",
                "currency": "'EUR'",
                "item_refund": "19.90",
            },
        )
        _insert_select(
            Return,
            o,
            {
                "order_id": "o.id",
                "seller_id": "o.seller_id",
                "mp_return_number": "'R' || o.id",
                "reason": "'broken'",
                "request_date": _day(vendor, _plus_days(vendor, "o.purchase_date", "5")),
                "respond_date": _day(vendor, _plus_days(vendor, "o.purchase_date", "19")),
                "intake_fingerprint": "'rfp' || o.id",
                "status": "CASE WHEN o.id % 3 = 0 THEN 'AWAITING_AUTHORIZATION' "
                "ELSE 'COMPLETED' END",
                # The completed ones authorized 0 to 3 days after the request (the
                # authorization wait's percentiles); never in the future.
                "authorized_at": "CASE WHEN o.id % 3 = 0 THEN NULL ELSE "
                f"{_not_after_now(vendor, _plus_days(vendor, 'o.purchase_date', '5 + o.id % 4'))}"
                " END",
            },
            where="WHERE o.id % 50 = 13",
        )
        returns = (
            f"(SELECT rt.id AS return_id, l.id AS line_id FROM {Return._meta.db_table} rt "
            f"JOIN {OrderLine._meta.db_table} l ON l.order_id = rt.order_id "
            f"WHERE rt.order_id >= {start}) rt"
        )
        _insert_select(
            ReturnLine,
            returns,
            {
                "return_request_id": "rt.return_id",
                "mp_return_line_number": "'1'",
                "order_line_id": "rt.line_id",
                "quantity": "1",
                "requested_refund_principal": "19.90",
                "requested_refund_tax": "3.98",
            },
        )
    if connection.vendor == "postgresql":
        # As autovacuum leaves a live database: statistics, hint bits and the visibility
        # map set (else the next reads pay for the bulk insert, and only the second phase
        # of the history comparison would).
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    return start


def _feed_runs(*, first_seller: int, sellers: int, now: datetime) -> None:
    from django.db import connection

    from marketplace.catalog.models import FeedRun

    _insert_select(
        FeedRun,
        _series(connection.vendor, sellers),
        {
            "seller_id": f"{first_seller} + g.i - 1",
            "status": "'succeeded'",
            "file_path": "''",
            "rows": "100",
            "rejected": "g.i % 20",
        },
    )
    FeedRun.objects.update(received_at=now - timedelta(days=3))


def _measure(rounds: int) -> dict[str, Any]:
    """The job and the bare SELECT, alternating; medians and the job's last steps."""
    from django.db import connection
    from django.utils import timezone

    from marketplace.performance import statements
    from marketplace.performance.refresh import moment_at, scorecards_refresh

    job, bare = [], []
    steps: dict[str, float] = {}
    for _ in range(rounds):
        started = time.perf_counter()
        with connection.cursor() as cursor:
            sql, params = statements.baseline_select(connection, moment_at(timezone.now()))
            cursor.execute(sql, params)
            cursor.fetchall()
        bare.append(time.perf_counter() - started)
        started = time.perf_counter()
        outcome = scorecards_refresh()
        job.append(time.perf_counter() - started)
        steps = outcome.seconds_by_step
    return {
        "job_s": round(statistics.median(job), 3),
        "bare_s": round(statistics.median(bare), 3),
        "steps": steps,
        "rows": outcome.rows,
    }


def run(
    env: BenchEnvironment, *, sellers: int, orders: int, history_factor: int, rounds: int
) -> dict[str, Any]:
    from django.db import connection
    from django.utils import timezone

    from marketplace.performance.models import Scorecard

    env.flush()
    vendor = connection.vendor
    started = time.perf_counter()
    seller_rows = sellers_create(count=sellers, prefix=f"p10-{sellers}")
    first = seller_rows[0].id
    assert seller_rows[-1].id == first + sellers - 1, "seller ids are not contiguous"
    orders_generate(
        vendor=vendor, first_seller=first, sellers=sellers, count=orders, prefix="W", history=False
    )
    _feed_runs(first_seller=first, sellers=sellers, now=timezone.now())
    took = time.perf_counter() - started
    log(f"P10: {sellers} sellers, {orders} orders in the window in {took:.0f}s")
    window = _measure(rounds)
    log(f"P10: job {window['job_s']} s vs bare {window['bare_s']} s")
    history = orders * history_factor
    with_history: dict[str, Any] | None = None
    if history:
        started = time.perf_counter()
        orders_generate(
            vendor=vendor,
            first_seller=first,
            sellers=sellers,
            count=history,
            prefix="H",
            history=True,
        )
        log(f"P10: {history} orders of history in {time.perf_counter() - started:.0f}s")
        with_history = _measure(rounds)
        log(f"P10: with history, job {with_history['job_s']} s")
    ratio = round(window["job_s"] / window["bare_s"], 2) if window["bare_s"] else None
    history_ratio = (
        round(with_history["job_s"] / window["job_s"], 2)
        if with_history and window["job_s"]
        else None
    )
    late = Scorecard.objects.filter(window_days=30).exclude(late_rate=None).count()
    waits = Scorecard.objects.filter(window_days=90).exclude(authorization_days_median=None)
    return {
        "vendor": vendor,
        "sellers": sellers,
        "orders": orders,
        "history": history,
        "rounds": rounds,
        "job_s": window["job_s"],
        "bare_s": window["bare_s"],
        "ratio_to_bare": ratio,
        "steps": window["steps"],
        "rows_written": window["rows"],
        "sellers_with_late_rate": late,
        "sellers_with_authorization_wait": waits.count(),
        "job_with_history_s": with_history["job_s"] if with_history else None,
        "bare_with_history_s": with_history["bare_s"] if with_history else None,
        "history_ratio": history_ratio,
        "goal_met": bool(
            ratio is not None and ratio <= 1.5 and (history_ratio is None or history_ratio <= 1.2)
        ),
    }
