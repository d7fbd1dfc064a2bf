"""Small display helpers for the dashboard and portal templates."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django import template
from django.utils import timezone

from marketplace.dashboard import overview
from marketplace.dashboard.json_display import JsonText, json_for_people
from marketplace.dashboard.selectors import CONNECTION_BADGES, SYNC_BADGES
from marketplace.order_money import order_total as shared_order_total
from marketplace.orders.models import Order

register = template.Library()


@register.filter
def sync_badge(status: str) -> str:
    """The badge class of a sync status: ok / info / warn / bad."""
    return SYNC_BADGES.get(status, "")


@register.filter
def connection_badge(state: str) -> str:
    return CONNECTION_BADGES.get(state, "")


@register.filter
def call_badge(status: int | None) -> str:
    if status is None or status >= 500:
        return "bad"
    if status >= 400:
        return "warn"
    return "ok"


@register.filter
def duration(value: timedelta | None) -> str:
    """A short human duration: "45 s", "12 min", "3 h 5 min", "2 d 4 h"."""
    if not isinstance(value, timedelta):
        return "—"
    seconds = max(int(value.total_seconds()), 0)
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


@register.filter
def age(value: datetime | None) -> str:
    """How long ago: "12 min ago" (or "in 5 min" for a future time)."""
    if not isinstance(value, datetime):
        return "never"  # also a missing row: the template passes "" for it
    delta = timezone.now() - value
    if delta.total_seconds() < 0:
        return f"in {duration(-delta)}"
    return f"{duration(delta)} ago"


@register.filter
def due_in(value: datetime | None) -> str:
    """When a scheduled thing is due: "due now" once its time has come, else "in 5 min"."""
    if not isinstance(value, datetime):
        return "not scheduled"
    delta = value - timezone.now()
    return f"in {duration(delta)}" if delta.total_seconds() > 0 else "due now"


@register.filter
def web_url(value: str) -> str:
    """The URL if it is an http(s) link, else "": a seller-supplied tracking URL must never
    become a ``javascript:`` link on our pages."""
    if not value:
        return ""
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return ""
    return value.strip() if parts.scheme in ("http", "https") and parts.netloc else ""


@register.filter
def json_excerpt(value: str) -> JsonText:
    """A stored response excerpt, indented and marked when it was cut short."""
    return json_for_people(value)


# The platform's codes, as a sentence fragment a seller reads (the code stays in a tooltip).
# The fulfillments answer says PENDING / PARTIALLY_FULFILLED / COMPLETE (the listing's
# filter names UNFULFILLED and FULFILLED mean the same).
FULFILLMENT_WORDS = {
    "PENDING": "nothing shipped yet",
    "UNFULFILLED": "nothing shipped yet",
    "PARTIALLY_FULFILLED": "partly shipped",
    "COMPLETE": "every line shipped or cancelled",
    "FULFILLED": "every line shipped or cancelled",
}
CANCEL_REASON_WORDS = {
    "customer_cancelled": "the buyer cancelled",
    "unable_to_ship": "could not be shipped",
    "out_of_stock": "out of stock",
    "price_error": "price error",
    "tax_error": "tax error",
    "shipping_price_error": "shipping price error",
    "other": "other reason",
}


@register.filter
def fulfillment_words(code: str) -> str:
    """``PARTIALLY_FULFILLED`` → "partly shipped"; an unknown code is shown as it is."""
    return FULFILLMENT_WORDS.get((code or "").upper(), (code or "").replace("_", " ").lower())


LINE_STATUS_WORDS = {
    "unfulfilled": "not shipped yet",
    "partially_fulfilled": "partly shipped",
    "fulfilled": "shipped or cancelled",
}


@register.filter
def line_status_words(status: str) -> str:
    """A line's fulfillment (``partially_fulfilled`` → "partly shipped")."""
    return LINE_STATUS_WORDS.get(status or "", (status or "").replace("_", " "))


@register.filter
def cancel_reason_words(code: str) -> str:
    """``out_of_stock`` → "out of stock"; an unknown code in plain letters."""
    return CANCEL_REASON_WORDS.get(code or "", (code or "").replace("_", " "))


@register.filter
def state_words(order: Any) -> str:
    """The order's marketplace state as people say it: an unpaid order is "Awaiting
    payment", one the platform reports partly shipped is "Partly shipped" (not "Awaiting
    shipment"), the others their state's label."""
    if order.state == "PENDING":
        return "Awaiting payment"
    if order.state == "AWAITING_SHIPMENT" and (
        (order.fulfillment_status or "").upper() == "PARTIALLY_FULFILLED"
    ):
        return "Partly shipped"
    return str(order.get_state_display())


@register.filter
def packages(order: Any) -> list[Any]:
    """The order's shipments, one per package: a package covering several lines is one
    shipment row per line, shown once (same carrier and tracking number)."""
    seen: set[tuple[str, str]] = set()
    found = []
    for line in order.lines.all():
        for shipment in line.shipments.all():
            key = (shipment.carrier, shipment.tracking_number)
            if not shipment.tracking_number or key not in seen:
                seen.add(key)
                found.append(shipment)
    return found


@register.filter
def order_total(order: Order) -> Decimal:
    """What the buyer paid for ``order`` (its lines prefetched: see ``with_lines``)."""
    return shared_order_total(order)


@register.simple_tag
def staff_attention() -> overview.Attention:
    """What needs staff, for the navigation's counts: one statement of index probes
    (``attention_get``), whatever the number of orders or sellers."""
    return overview.attention_get(now=timezone.now())
