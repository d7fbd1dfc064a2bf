"""The status the marketplace gave each of a seller's listings, as the seller reads it.

One rule, the listing-status file's (``catalog/listing_status/status_file.py``) with stock
added: a SKU the latest feed runs rejected is *refused* (with the reason), whatever an
older accepted version says; otherwise an inactive listing is *inactive*; an active one
with no stock is *out of stock*; the rest is *live*.
"""

from __future__ import annotations

from typing import Final

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery

from marketplace import glossary
from marketplace.catalog.models import Listing, RejectedSku

LIVE, REFUSED, OUT_OF_STOCK, INACTIVE = "live", "refused", "out_of_stock", "inactive"
STATUSES: Final[tuple[str, ...]] = (LIVE, REFUSED, OUT_OF_STOCK, INACTIVE)
LABELS: Final[dict[str, str]] = {
    LIVE: glossary.term("listing_live"),
    REFUSED: glossary.term("listing_refused"),
    OUT_OF_STOCK: glossary.term("listing_out_of_stock"),
    INACTIVE: glossary.term("listing_inactive"),
}
BADGES: Final[dict[str, str]] = {
    LIVE: "ok",
    REFUSED: "bad",
    OUT_OF_STOCK: "warn",
    INACTIVE: "warn",
}


def _rejection(seller_id: int) -> QuerySet[RejectedSku]:
    return RejectedSku.objects.filter(seller_id=seller_id, sku=OuterRef("sku"))


def _where(status: str) -> Q:
    not_refused = Q(refused_reason__isnull=True)
    return {
        LIVE: not_refused & Q(active=True, quantity__gt=0),
        REFUSED: Q(refused_reason__isnull=False),
        OUT_OF_STOCK: not_refused & Q(active=True, quantity=0),
        INACTIVE: not_refused & Q(active=False),
    }[status]


def listings_with_status(*, seller_id: int, q: str = "", status: str = "") -> QuerySet[Listing]:
    """The seller's listings, each with ``refused_reason`` (or None), ordered by SKU."""
    listings = Listing.objects.filter(seller_id=seller_id).annotate(
        refused_reason=Subquery(_rejection(seller_id).values("reason")[:1])
    )
    if status in STATUSES:
        listings = listings.filter(_where(status))
    if q:
        listings = listings.filter(Q(sku__icontains=q) | Q(title__icontains=q) | Q(gtin=q))
    return listings.order_by("sku").defer("description")


def listing_with_status(*, seller_id: int, listing_id: int) -> Listing | None:
    return listings_with_status(seller_id=seller_id).filter(pk=listing_id).first()


def status_of(listing: Listing) -> str:
    """The status of a listing from ``listings_with_status``."""
    if getattr(listing, "refused_reason", None) is not None:
        return REFUSED
    if not listing.active:
        return INACTIVE
    return OUT_OF_STOCK if listing.quantity == 0 else LIVE


def status_counts(*, seller_id: int) -> dict[str, int]:
    """How many listings have each status (one query)."""
    rows = listings_with_status(seller_id=seller_id).aggregate(
        **{status: Count("pk", filter=_where(status)) for status in STATUSES}
    )
    return {status: int(rows[status] or 0) for status in STATUSES}


def refused_without_listing(*, seller_id: int) -> QuerySet[RejectedSku]:
    """Refused SKUs that never became a listing (the feed's first version was refused)."""
    listed = Listing.objects.filter(seller_id=seller_id, sku=OuterRef("sku"))
    return RejectedSku.objects.filter(seller_id=seller_id).exclude(Exists(listed)).order_by("sku")
