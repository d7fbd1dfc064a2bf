"""The staff dashboard's pages: overview, sellers, orders (their buttons are in
``action_views``, the lists' bulk buttons in ``bulk_views``, the CSV in ``export_views``).

Views stay thin: reads come from ``marketplace.dashboard.selectors``, ``overview`` and
``order_lists``.
Each ``*_live`` view returns the HTML fragment that ``static/js/live.js`` swaps into the
page every few seconds.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, TypeVar

from django.core.paginator import Page, Paginator
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from marketplace.access import staff_required
from marketplace.dashboard import order_lists, selectors
from marketplace.dashboard.action_views import order_or_404, seller_or_404
from marketplace.dashboard.charts import chart_legend, hourly_bars_svg
from marketplace.dashboard.forms import OrderFilterForm, SellerFilterForm, cleaned
from marketplace.dashboard.json_display import json_for_people
from marketplace.dashboard.order_lists import OrderFilters
from marketplace.dashboard.overview import overview_get
from marketplace.order_money import order_money
from marketplace.orders.models import Order, OrderSync
from marketplace.orders.selectors import line_fulfillments
from marketplace.returns import selectors as returns_selectors
from marketplace.sync.models import SellerSync
from sellers.models import PlatformConnection, Seller

PAGE_SIZE = 25
_M = TypeVar("_M", bound=Model)


def _page(request: HttpRequest, queryset: QuerySet[_M]) -> Page[_M]:
    return Paginator(queryset, PAGE_SIZE).get_page(request.GET.get("page"))


def _connection_of(seller: Seller) -> PlatformConnection | None:
    try:
        return seller.connection
    except PlatformConnection.DoesNotExist:
        return None


def _seller_sync_of(seller: Seller) -> SellerSync | None:
    try:
        return seller.sync  # read with the seller (select_related)
    except SellerSync.DoesNotExist:
        return None


def _sync_of(order: Order) -> OrderSync | None:
    try:
        return order.sync
    except OrderSync.DoesNotExist:
        return None


# --- overview --------------------------------------------------------------------------


def _overview_context() -> dict[str, Any]:
    overview = overview_get(now=timezone.now())
    return {
        "overview": overview,
        "chart": hourly_bars_svg(
            overview.chart, title="Platform calls per hour, last 24 hours (UTC)"
        ),
        "legend": chart_legend(),
    }


@require_GET
@staff_required
def overview(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/overview.html", _overview_context())


@require_GET
@staff_required
@never_cache
def overview_live(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/_overview_live.html", _overview_context())


# --- sellers ---------------------------------------------------------------------------


@require_GET
@staff_required
def seller_list(request: HttpRequest) -> HttpResponse:
    form = SellerFilterForm(request.GET)
    params = cleaned(form)
    sort = params["sort"] or "name"
    sellers = selectors.seller_list(
        search=(params["q"] or "").strip(),
        state=params["state"] or "",
        has_failures=bool(params["has_failures"]),
        sort=sort,
        flagged=params["flagged"] or "",
    )
    return render(
        request,
        "dashboard/seller_list.html",
        {
            "form": form,
            "page": _page(request, sellers),
            "sort": sort,
            "filtered": form.has_changed(),
        },
    )


def _seller_status_context(seller: Seller) -> dict[str, Any]:
    return {
        "seller": seller,
        "connection": _connection_of(seller),
        # One row holds both: how the pulls went, and when the next is due.
        "pull_state": _seller_sync_of(seller),
        "pull_schedule": _seller_sync_of(seller),
        "sync_counts": selectors.sync_status_tallies(seller_id=seller.id),
        "now": timezone.now(),
    }


@require_GET
@staff_required
def seller_detail(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    context = _seller_status_context(seller)
    context.update(
        failed_count=next(
            (t.count for t in context["sync_counts"] if t.value == OrderSync.Status.FAILED), 0
        ),
        events=selectors.seller_connection_events(seller_id=seller.id),
        page=_page(
            request,
            order_lists.order_list_for_staff(
                filters=OrderFilters(seller_id=seller.id), now=timezone.now()
            ),
        ),
        calls=selectors.seller_recent_calls(seller_id=seller.id),
        reported=selectors.seller_reported_problems(seller_id=seller.id),
        actions=selectors.staff_actions_for(seller_id=seller.id),
    )
    return render(request, "dashboard/seller_detail.html", context)


@require_GET
@staff_required
@never_cache
def seller_live(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = seller_or_404(seller_id)
    return render(request, "dashboard/_seller_live.html", _seller_status_context(seller))


# --- orders ----------------------------------------------------------------------------


@require_GET
@staff_required
def order_list(request: HttpRequest) -> HttpResponse:
    form = OrderFilterForm(request.GET)
    filters = form.filters()
    orders = order_lists.order_list_for_staff(filters=filters, now=timezone.now())
    # The page's lines come in one query (for the totals), not one per order.
    page = _page(request, order_lists.with_lines(orders))
    return render(
        request,
        "dashboard/order_list.html",
        {
            "form": form,
            "page": page,
            "sort": filters.sort,
            "filtered": form.is_filtered(),
            "failed_status": OrderSync.Status.FAILED,
        },
    )


def _order_status_context(order: Order) -> dict[str, Any]:
    return {
        "order": order,
        "sync": _sync_of(order),
        "history": selectors.order_history(order_id=order.id),
    }


@require_GET
@staff_required
def order_detail(request: HttpRequest, order_id: int) -> HttpResponse:
    order = order_or_404(order_id)
    sync = _sync_of(order)
    context = _order_status_context(order)
    context.update(
        lines=line_fulfillments(order),
        problems=list(order.problems.all()),
        calls=selectors.order_calls(order=order),
        payload=json_for_people(sync.last_payload if sync else None),
        response=json_for_people(sync.last_response if sync else None),
        actions=selectors.staff_actions_for(order_id=order.id),
    )
    after_sale = returns_selectors.order_returns_and_refunds(order_id=order.id)
    # The ledger is read once, with the returns: the refunded sum comes from those rows.
    money = order_money(
        order, refunded=sum((entry.amount for entry in after_sale["ledger"]), Decimal("0"))
    )
    by_line = {m.line.id: m for m in money.lines}
    context.update(
        money=money,
        line_rows=[(lf, by_line[lf.line.id]) for lf in context["lines"]],
        after_sale=after_sale,
        timeline=returns_selectors.order_timeline(after_sale=after_sale, events=context["history"]),
    )
    return render(request, "dashboard/order_detail.html", context)


ORDER_LIVE_PARTS = {
    "sync": "dashboard/_order_sync.html",
    "history": "dashboard/_order_history.html",
}


@require_GET
@staff_required
@never_cache
def order_live(request: HttpRequest, order_id: int) -> HttpResponse:
    """The part of the order page a push changes: ``?part=sync`` or ``?part=history``."""
    template = ORDER_LIVE_PARTS.get(request.GET.get("part", ""), ORDER_LIVE_PARTS["sync"])
    # No prefetches: only the sync row and the history change while a push runs.
    order = Order.objects.select_related("sync").filter(pk=order_id).first()
    if order is None:
        raise Http404("no such order")
    return render(request, template, _order_status_context(order))
