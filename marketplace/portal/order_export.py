"""The seller's order list as CSV: exactly the rows the filtered list shows, streamed
(one chunk of orders in memory at a time, whatever the export's size)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator

from django.db.models import QuerySet

from marketplace.order_money import order_total
from marketplace.orders.models import Order, OrderSync
from marketplace.templatetags.display import format_time

HEADER = (
    "Order",
    "Placed",
    "Buyer",
    "State",
    "Total",
    "Currency",
    "Ship by",
    "Late",
    "Problems to fix",
    "On the platform",
)
CHUNK = 500

_SYNC_WORDS = {
    "synced": "Up to date",
    "pending": "Sending",
    "retrying": "Retrying",
    "waiting_for_connection": "Waiting for your connection",
    "failed": "Not sent yet (we are on it)",
}


class _Echo:
    """A file whose write gives the line back: csv.writer formats, the response streams."""

    def write(self, value: str) -> str:
        return value


def state_words(order: Order) -> str:
    if order.state == Order.State.PENDING:
        return "Awaiting payment"
    return str(order.get_state_display())


def platform_words(order: Order) -> str:
    try:
        sync = order.sync
    except OrderSync.DoesNotExist:
        return ""
    if sync.status == "synced" and int(getattr(order, "open_problems", 0) or 0) > 0:
        return "Needs your fix"
    return _SYNC_WORDS.get(sync.status, sync.get_status_display())


def _text(value: str) -> str:
    """A value a spreadsheet will not run as a formula (a buyer named "=HYPERLINK(…)")."""
    return f"'{value}" if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def order_row(order: Order) -> tuple[str, ...]:
    return (
        _text(order.mp_order_number),
        format_time(order.purchase_date),
        _text(order.customer_full_name),
        state_words(order),
        str(order_total(order)),
        order.currency,
        format_time(order.latest_ship_date),
        "yes" if getattr(order, "is_late", False) else "",
        str(getattr(order, "open_problems", 0) or 0),
        platform_words(order),
    )


def csv_lines(orders: QuerySet[Order]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(HEADER)
    rows: Iterable[Order] = orders.iterator(chunk_size=CHUNK)
    for order in rows:
        yield writer.writerow(order_row(order))
