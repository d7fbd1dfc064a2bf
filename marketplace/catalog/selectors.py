"""Reads for the catalog pages."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q, QuerySet

from marketplace.catalog.models import CatalogSource, FeedRun, Listing


def catalog_source_of(*, seller_id: int) -> CatalogSource | None:
    return CatalogSource.objects.filter(seller_id=seller_id).first()


def listing_list(*, seller_id: int, q: str = "", status: str = "") -> QuerySet[Listing]:
    listings = Listing.objects.filter(seller_id=seller_id)
    if status == "active":
        listings = listings.filter(active=True)
    elif status == "inactive":
        listings = listings.filter(active=False)
    if q:
        listings = listings.filter(Q(sku__icontains=q) | Q(title__icontains=q) | Q(gtin=q))
    return listings.order_by("sku").defer("description")


def listing_counts(*, seller_id: int) -> dict[str, int]:
    active = Listing.objects.filter(seller_id=seller_id, active=True).count()
    total = Listing.objects.filter(seller_id=seller_id).count()
    return {"active": active, "inactive": total - active, "total": total}


def feed_run_list(*, seller_id: int, limit: int = 20) -> list[FeedRun]:
    return list(FeedRun.objects.filter(seller_id=seller_id).defer("rejections")[:limit])


def listings_for_skus(*, seller_id: int, skus: Iterable[str]) -> dict[str, Listing]:
    """The seller's listings of these SKUs (active or not), by SKU: one query."""
    wanted = {sku for sku in skus if sku}
    if not wanted:
        return {}
    return {
        listing.sku: listing
        for listing in Listing.objects.filter(seller_id=seller_id, sku__in=wanted).only(
            "id", "sku", "title", "active", "price", "quantity", "seller_id"
        )
    }


def catalog_sources_overview() -> QuerySet[CatalogSource]:
    return CatalogSource.objects.select_related("seller").order_by("seller__display_name")
