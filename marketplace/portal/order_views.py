"""The seller portal's order pages: the seller's own orders, their platform sync status,
shipments with tracking links and validation problems in plain words.

Every read is scoped to the signed-in seller: another seller's order is a 404, exactly as
if it did not exist.
"""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from marketplace.orders.models import Order, OrderSync
from marketplace.orders.selectors import line_fulfillments
from marketplace.portal import selectors
from marketplace.portal.forms import PortalOrderSearchForm, cleaned
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


@require_GET
@seller_required
def order_list(request: SellerRequest) -> HttpResponse:
    form = PortalOrderSearchForm(request.GET)
    params = cleaned(form)
    search = (params["q"] or "").strip()
    only_problems = bool(params["problems"])
    orders = selectors.seller_order_list(
        seller=request.seller, search=search, has_problems=only_problems
    )
    return render(
        request,
        "portal/order_list.html",
        {
            # The context sellers/portal.html needs for its connection card.
            **seller_selectors.connection_card(seller=request.seller, now=timezone.now()),
            "form": form,
            "search": search,
            "only_problems": only_problems,
            "page": Paginator(orders, PAGE_SIZE).get_page(request.GET.get("page")),
        },
    )


@require_GET
@seller_required
def order_detail(request: SellerRequest, order_id: int) -> HttpResponse:
    order = _order_or_404(request, order_id)
    problems = [
        (problem, problem_help(problem.code)) for problem in order.problems.all() if problem.is_open
    ]
    return render(
        request,
        "portal/order_detail.html",
        {
            "order": order,
            "sync": _sync_of(order),
            "lines": line_fulfillments(order),
            "problems": problems,
        },
    )


@require_GET
@seller_required
@never_cache
def order_live(request: SellerRequest, order_id: int) -> HttpResponse:
    # Only the sync row changes while the page is open: no need for lines and problems.
    order = Order.objects.select_related("sync").filter(seller=request.seller, pk=order_id).first()
    if order is None:
        raise Http404("no such order")
    return render(request, "portal/_order_live.html", {"order": order, "sync": _sync_of(order)})
