"""The seller's order list: filters (state, placed between two dates, late, with a
problem, an order number or buyer), sorting and the late flag. The page and its CSV
export read the same queryset, so the export's rows are the list's rows."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from django import forms
from django.db.models import BooleanField, Case, Q, QuerySet, Value, When

from marketplace.orders.models import MarketplaceState, Order
from marketplace.orders.selectors import OPEN_ORDER_STATES, with_open_problems
from marketplace.portal import selectors
from marketplace.templatetags.display import marketplace_zone
from sellers.models import Seller

SORTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "placed_desc": ("Newest first", ("-purchase_date", "-id")),
    "placed_asc": ("Oldest first", ("purchase_date", "id")),
    "ship_by": ("Ship by, soonest first", ("latest_ship_date", "id")),
    "number": ("Order number", ("mp_order_number",)),
    "buyer": ("Buyer", ("customer_full_name", "id")),
}
DEFAULT_SORT = "placed_desc"


# The state filter in the seller's words (an unpaid order is "awaiting payment").
STATE_CHOICES = [
    ("", "every state"),
    (MarketplaceState.PENDING, "Awaiting payment"),
    (MarketplaceState.AWAITING_SHIPMENT, "To ship"),
    (MarketplaceState.SHIPPED, "Shipped"),
    (MarketplaceState.CANCELLED, "Cancelled"),
]


class OrderFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=128, label="Order or buyer")
    state = forms.ChoiceField(required=False, choices=STATE_CHOICES)
    since = forms.DateField(required=False, label="Placed from")
    until = forms.DateField(required=False, label="Placed until")
    late = forms.BooleanField(required=False, label="Late")
    problems = forms.BooleanField(required=False, label="With problems")
    sort = forms.ChoiceField(
        required=False, choices=[(key, label) for key, (label, _) in SORTS.items()]
    )


def _day_start(day: date) -> datetime:
    """Midnight of ``day`` in the marketplace's zone (what a person means by "from")."""
    return datetime.combine(day, time.min, tzinfo=marketplace_zone())


def late_q(now: datetime) -> Q:
    """Not shipped or cancelled yet, and its ship-by date has passed."""
    return Q(state__in=OPEN_ORDER_STATES, latest_ship_date__lt=now)


def filtered_orders(*, seller: Seller, params: dict[str, Any], now: datetime) -> QuerySet[Order]:
    """The seller's orders for the valid ``params`` of ``OrderFilterForm``, each with
    ``is_late`` and ``open_problems``."""
    orders = selectors.seller_order_list(seller=seller).annotate(
        is_late=Case(
            When(late_q(now), then=Value(True)), default=Value(False), output_field=BooleanField()
        )
    )
    search = (params.get("q") or "").strip()
    if search:
        orders = orders.filter(
            Q(mp_order_number__icontains=search) | Q(customer_full_name__icontains=search)
        )
    if params.get("state"):
        orders = orders.filter(state=params["state"])
    if params.get("since"):
        orders = orders.filter(purchase_date__gte=_day_start(params["since"]))
    if params.get("until"):
        orders = orders.filter(purchase_date__lt=_day_start(params["until"] + timedelta(days=1)))
    if params.get("late"):
        orders = orders.filter(late_q(now))
    if params.get("problems"):
        orders = with_open_problems(orders)
    _, ordering = SORTS.get(params.get("sort") or DEFAULT_SORT, SORTS[DEFAULT_SORT])
    return orders.order_by(*ordering)
