"""The seller portal's catalog page: which platform database feeds the catalog, the
listings with the status the marketplace gave each (live, refused with the reason, out of
stock, inactive; a filter by each, paginated) and the recent feed runs. Scoped to the
signed-in seller."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from marketplace.catalog import selectors
from marketplace.catalog.models import FeedRun
from marketplace.portal import listing_status
from marketplace.portal.forms import cleaned
from sellers.access import SellerRequest, seller_required

# A page a person can scroll on a phone (the cards stack there).
PAGE_SIZE = 25


class ListingStatusForm(forms.Form):
    q = forms.CharField(required=False, max_length=100)
    status = forms.ChoiceField(
        required=False,
        choices=[("", "every status"), *list(listing_status.LABELS.items())],
    )


@require_GET
@seller_required
@never_cache
def listings(request: SellerRequest) -> HttpResponse:
    seller = request.seller
    form = ListingStatusForm(request.GET)
    criteria = cleaned(form)
    status = criteria["status"] or ""
    queryset = listing_status.listings_with_status(
        seller_id=seller.pk, q=criteria["q"] or "", status=status
    )
    page = Paginator(queryset, PAGE_SIZE).get_page(request.GET.get("page"))
    counts = listing_status.status_counts(seller_id=seller.pk)
    rows = [
        {
            "listing": listing,
            "status": (code := listing_status.status_of(listing)),
            "label": listing_status.LABELS[code],
            "badge": listing_status.BADGES[code],
        }
        for listing in page.object_list
    ]
    return render(
        request,
        "catalog/portal_listings.html",
        {
            "seller": seller,
            "source": selectors.catalog_source_of(seller_id=seller.pk),
            "form": form,
            "status": status,
            "status_tabs": [
                (code, label, counts[code]) for code, label in listing_status.LABELS.items()
            ],
            "page": page,
            "rows": rows,
            "counts": counts,
            "currency": settings.MARKETPLACE_CURRENCY,
            "unlisted_refused": (
                list(listing_status.refused_without_listing(seller_id=seller.pk)[:50])
                if status in ("", listing_status.REFUSED) and not criteria["q"]
                else []
            ),
            "runs": selectors.feed_run_list(seller_id=seller.pk, limit=10),
        },
    )


@require_GET
@seller_required
@never_cache
def listing_detail(request: SellerRequest, listing_id: int) -> HttpResponse:
    listing = listing_status.listing_with_status(seller_id=request.seller.pk, listing_id=listing_id)
    if listing is None:
        raise Http404("no such listing")
    status = listing_status.status_of(listing)
    return render(
        request,
        "portal/listing_detail.html",
        {
            "listing": listing,
            "status": status,
            "label": listing_status.LABELS[status],
            "badge": listing_status.BADGES[status],
            "currency": settings.MARKETPLACE_CURRENCY,
        },
    )


@require_GET
@seller_required
@never_cache
def run_detail(request: SellerRequest, run_id: int) -> HttpResponse:
    run = FeedRun.objects.filter(pk=run_id, seller=request.seller).first()
    if run is None:
        raise Http404("no such feed run")
    return render(request, "catalog/run_detail.html", {"run": run, "staff": False})
