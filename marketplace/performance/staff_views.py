"""Staff pages: one seller's scorecard (every measure, each window, the trend chart) and
the orders behind each figure."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from marketplace.access import staff_required
from marketplace.performance import selectors
from marketplace.performance.page_context import orders_context, scorecard_context
from sellers.models import Seller


@require_GET
@staff_required
def seller_performance(request: HttpRequest, seller_id: int) -> HttpResponse:
    seller = get_object_or_404(Seller, pk=seller_id)
    context = scorecard_context(request, seller_id=seller.pk)
    return render(request, "performance/staff_seller.html", {"seller": seller, **context})


@require_GET
@staff_required
def seller_performance_orders(request: HttpRequest, seller_id: int, kind: str) -> HttpResponse:
    seller = get_object_or_404(Seller, pk=seller_id)
    if kind not in selectors.ORDER_LISTS:
        raise Http404("no such list")
    context = orders_context(request, seller_id=seller.pk, kind=kind)
    return render(request, "performance/staff_orders.html", {"seller": seller, **context})
