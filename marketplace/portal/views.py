"""The seller portal's home: the connection card, the problems to fix first, and how the
seller's orders stand with the platform."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from marketplace.orders.selectors import order_sync_status_counts
from marketplace.portal.needs_you import seller_needs_you
from marketplace.portal.selectors import seller_todo
from marketplace.portal.services import portal_pull_now
from marketplace.sync.selectors import seller_sync_get
from sellers import selectors as seller_selectors
from sellers.access import SellerRequest, seller_required


@require_GET
@seller_required
def home(request: SellerRequest) -> HttpResponse:
    return _home(request)


def _home(request: SellerRequest, *, status: int = 200) -> HttpResponse:
    context = seller_selectors.connection_card(seller=request.seller, now=timezone.now())
    context["events"] = seller_selectors.connection_events_for_seller(
        seller=request.seller, limit=5
    )
    counts = order_sync_status_counts(seller_id=request.seller.id)
    context["todo"] = seller_todo(seller=request.seller)
    context["needs"] = seller_needs_you(seller=request.seller)
    context["order_counts"] = counts
    context["order_total"] = sum(counts.values())
    context["order_waiting"] = (
        counts["pending"] + counts["retrying"] + counts["waiting_for_connection"]
    )
    context["pull_interval"] = int(settings.PULL_INTERVAL_SECONDS)
    context["pull_state"] = seller_sync_get(seller_id=request.seller.id)
    return render(request, "sellers/portal.html", context, status=status)


@require_POST
@seller_required
def pull_now(request: SellerRequest) -> HttpResponse:
    """The seller's own Pull now: their connection only (no id in the URL), rate-limited.
    Queued: back to the home page (303) with the news; too soon: 429 with the wait
    (``Retry-After``); not connected: 409."""
    done = portal_pull_now(seller=request.seller)
    if done.outcome == "queued":
        messages.success(request, done.message)
        see_other = redirect("sellers:portal")
        see_other.status_code = 303  # See Other: the browser GETs the home page
        return see_other
    messages.error(request, done.message)
    response = _home(request, status=429 if done.outcome == "too_soon" else 409)
    if done.retry_after:
        response["Retry-After"] = str(done.retry_after)
    return response
