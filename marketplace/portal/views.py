"""The seller portal's home: the connection card, the problems to fix first, and how the
seller's orders stand with the platform."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from marketplace.orders.selectors import order_sync_status_counts
from marketplace.portal.selectors import seller_todo
from sellers import selectors as seller_selectors
from sellers.access import SellerRequest, seller_required


@require_GET
@seller_required
def home(request: SellerRequest) -> HttpResponse:
    context = seller_selectors.connection_card(seller=request.seller, now=timezone.now())
    context["events"] = seller_selectors.connection_events_for_seller(
        seller=request.seller, limit=5
    )
    counts = order_sync_status_counts(seller_id=request.seller.id)
    context["todo"] = seller_todo(seller=request.seller)
    context["order_counts"] = counts
    context["order_total"] = sum(counts.values())
    context["order_waiting"] = (
        counts["pending"] + counts["retrying"] + counts["waiting_for_connection"]
    )
    return render(request, "sellers/portal.html", context)
