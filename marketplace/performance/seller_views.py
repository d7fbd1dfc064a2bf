"""The seller's Performance page: their own figures only (the seller comes from the
signed-in user, never from the URL), what each means and what to do about it."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from marketplace.performance import selectors
from marketplace.performance.page_context import orders_context, scorecard_context
from sellers.access import SellerRequest, seller_required


@require_GET
@seller_required
def performance(request: SellerRequest) -> HttpResponse:
    context = scorecard_context(request, seller_id=request.seller.pk)
    return render(request, "performance/seller.html", {"seller": request.seller, **context})


@require_GET
@seller_required
def performance_orders(request: SellerRequest, kind: str) -> HttpResponse:
    if kind not in selectors.ORDER_LISTS:
        raise Http404("no such list")
    context = orders_context(request, seller_id=request.seller.pk, kind=kind)
    return render(request, "performance/seller_orders.html", {"seller": request.seller, **context})
