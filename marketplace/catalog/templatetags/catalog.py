"""Template tags of the catalog: the API access banner, order lines' listings, and a
schedule in plain words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import template

from marketplace.catalog import selectors
from marketplace.catalog.models import PlatformApiAccess
from marketplace.catalog.provisioned import schedule_in_words

register = template.Library()


@register.inclusion_tag("catalog/_api_access_banner.html")
def api_access_banner() -> dict[str, Any]:
    return {"banner_access": PlatformApiAccess.objects.filter(pk=1).first()}


@dataclass(frozen=True)
class OrderListings:
    by_sku: dict[str, Any]
    unlisted: list[str]  # SKUs of the order with no active listing (flagged, not blocked)


@register.simple_tag
def order_listings(order: Any, lines: Any) -> OrderListings:
    """The seller's listings of the order lines' SKUs (one query)."""
    skus = [getattr(item, "line", item).sku for item in lines]
    by_sku = selectors.listings_for_skus(seller_id=order.seller_id, skus=skus)
    unlisted = sorted({sku for sku in skus if not (sku in by_sku and by_sku[sku].active)})
    return OrderListings(by_sku=by_sku, unlisted=unlisted)


@register.filter
def listing_of(listings: OrderListings | None, sku: str) -> Any:
    return listings.by_sku.get(sku) if listings else None


@register.inclusion_tag("catalog/_seller_summary.html")
def seller_catalog_summary(seller: Any) -> dict[str, Any]:
    """The seller's catalog in one line for the staff seller page (one query)."""
    return {"seller": seller, "source": selectors.catalog_source_of(seller_id=seller.pk)}


@register.filter
def schedule_words(cron: str) -> str:
    """``15 2 * * *`` → ``daily at 02:15 UTC`` (provisioned.schedule_in_words)."""
    return schedule_in_words(cron)


@register.filter
def age_words(seconds: int | None) -> str:
    """``75`` → ``1 min 15 s``: the age of the oldest waiting status."""
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
