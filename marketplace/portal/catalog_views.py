"""The seller portal's catalog page: which platform database feeds the catalog, the
listings (search, active/inactive, paginated) and the recent feed runs. Scoped to the
signed-in seller."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from marketplace.catalog import selectors
from marketplace.catalog.forms import ListingFilterForm
from marketplace.catalog.models import FeedRun, Listing
from sellers.access import SellerRequest, seller_required

PAGE_SIZE = 50


@require_GET
@seller_required
@never_cache
def listings(request: SellerRequest) -> HttpResponse:
    seller = request.seller
    form = ListingFilterForm(request.GET)
    form.is_valid()
    criteria = getattr(form, "cleaned_data", {})
    queryset = selectors.listing_list(
        seller_id=seller.pk, q=criteria.get("q", ""), status=criteria.get("status", "")
    )
    return render(
        request,
        "catalog/portal_listings.html",
        {
            "seller": seller,
            "source": selectors.catalog_source_of(seller_id=seller.pk),
            "form": form,
            "filtered": bool(criteria.get("q") or criteria.get("status")),
            "page": Paginator(queryset, PAGE_SIZE).get_page(request.GET.get("page")),
            "counts": selectors.listing_counts(seller_id=seller.pk),
            "runs": selectors.feed_run_list(seller_id=seller.pk, limit=10),
        },
    )


@require_GET
@seller_required
@never_cache
def listing_detail(request: SellerRequest, listing_id: int) -> HttpResponse:
    listing = Listing.objects.filter(pk=listing_id, seller=request.seller).first()
    if listing is None:
        raise Http404("no such listing")
    return render(request, "catalog/listing_detail.html", {"listing": listing, "staff": False})


@require_GET
@seller_required
@never_cache
def run_detail(request: SellerRequest, run_id: int) -> HttpResponse:
    run = FeedRun.objects.filter(pk=run_id, seller=request.seller).first()
    if run is None:
        raise Http404("no such feed run")
    return render(request, "catalog/run_detail.html", {"run": run, "staff": False})
