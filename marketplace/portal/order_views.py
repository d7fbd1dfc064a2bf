"""The seller portal's order pages: the seller's own orders (filters, sorting, paging,
CSV export of what the filter shows), their platform sync status, money, returns and
refunds, shipments with tracking links and validation problems in plain words.

Every read is scoped to the signed-in seller: another seller's order is a 404, exactly as
if it did not exist.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from marketplace.order_money import order_money, order_total
from marketplace.orders.models import Order, OrderSync, ValidationProblem
from marketplace.orders.selectors import OPEN_ORDER_STATES, line_fulfillments
from marketplace.portal import order_export, order_filters, selectors
from marketplace.portal.after_sale import order_after_sale
from marketplace.portal.forms import cleaned
from marketplace.portal.problem_help import problem_help
from sellers import selectors as seller_selectors
from sellers.access import SellerRequest, seller_required

PAGE_SIZE = 25


def _order_or_404(request: SellerRequest, order_id: int) -> Order:
    order = selectors.seller_order_get(seller=request.seller, order_id=order_id)
    if order is None:
        raise Http404("no such order")
    return order


def _sync_of(order: Order) -> OrderSync | None:
    try:
        return order.sync
    except OrderSync.DoesNotExist:
        return None


def _is_late(order: Order) -> bool:
    return bool(
        order.state in OPEN_ORDER_STATES
        and order.latest_ship_date
        and order.latest_ship_date < timezone.now()
    )


def problem_cards(problems: list[ValidationProblem]) -> list[dict[str, Any]]:
    """One card per kind of problem, naming the lines it is on (not one card per line)."""
    cards: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for problem in problems:
        card = cards.setdefault(
            problem.code,
            {"code": problem.code, "help": problem_help(problem.code), "lines": [], "problems": []},
        )
        card["problems"].append(problem)
        if problem.mp_line_number and problem.mp_line_number not in card["lines"]:
            card["lines"].append(problem.mp_line_number)
    return list(cards.values())


@require_GET
@seller_required
def order_list(request: SellerRequest) -> HttpResponse:
    form = order_filters.OrderFilterForm(request.GET)
    params = cleaned(form)
    orders = order_filters.filtered_orders(seller=request.seller, params=params, now=timezone.now())
    page = Paginator(orders, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [{"order": order, "total": order_total(order)} for order in page.object_list]
    return render(
        request,
        "portal/order_list.html",
        {
            # The context sellers/portal.html needs for its connection card.
            **seller_selectors.connection_card(seller=request.seller, now=timezone.now()),
            "pull_interval": int(settings.PULL_INTERVAL_SECONDS),
            "form": form,
            "filtered": any(params[name] for name in params if name != "sort"),
            "page": page,
            "rows": rows,
            "export_query": request.GET.urlencode(),
        },
    )


@require_GET
@seller_required
def order_export_csv(request: SellerRequest) -> StreamingHttpResponse:
    """The filtered list (same form, same queryset, same order) as a CSV file."""
    params = cleaned(order_filters.OrderFilterForm(request.GET))
    orders = order_filters.filtered_orders(seller=request.seller, params=params, now=timezone.now())
    response = StreamingHttpResponse(order_export.csv_lines(orders), content_type="text/csv")
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    response["Content-Disposition"] = f'attachment; filename="orders-{stamp}.csv"'
    return response


@require_GET
@seller_required
def order_detail(request: SellerRequest, order_id: int) -> HttpResponse:
    order = _order_or_404(request, order_id)
    open_problems = [problem for problem in order.problems.all() if problem.is_open]
    after_sale = order_after_sale(order=order)
    return render(
        request,
        "portal/order_detail.html",
        {
            "order": order,
            "sync": _sync_of(order),
            "lines": line_fulfillments(order),
            "problem_cards": problem_cards(open_problems),
            "open_problems": len(open_problems),
            "late": _is_late(order),
            "money": order_money(order, refunded=after_sale["refunded"]),
            "after_sale": after_sale,
            "pull_interval": int(settings.PULL_INTERVAL_SECONDS),
            "fix_url": _platform_order_url(order.mp_order_number),
        },
    )


def _platform_order_url(mp_order_number: str) -> str:
    """Where the seller corrects this order on the platform (empty: no known page)."""
    template = settings.PLATFORM_SELLER_ORDER_URL
    return template.format(mp_order_number=quote(mp_order_number, safe="")) if template else ""


@require_GET
@seller_required
@never_cache
def order_live(request: SellerRequest, order_id: int) -> HttpResponse:
    # Only the sync row changes while the page is open: no need for lines and problems.
    order = Order.objects.select_related("sync").filter(seller=request.seller, pk=order_id).first()
    if order is None:
        raise Http404("no such order")
    open_problems = order.problems.filter(resolved_at__isnull=True).count()
    return render(
        request,
        "portal/_order_live.html",
        {"order": order, "sync": _sync_of(order), "open_problems": open_problems},
    )
