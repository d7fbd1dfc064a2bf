"""Reads of the sellers' sync state for the staff pages and the seller's portal."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q

from marketplace.sync.models import SellerSync


def seller_sync_get(*, seller_id: int) -> SellerSync | None:
    return SellerSync.objects.filter(seller_id=seller_id).first()


def sellers_failing_pulls(*, limit: int) -> list[SellerSync]:
    """Sellers whose pulls failed several times in a row (partial index, limited)."""
    return list(
        SellerSync.objects.filter(consecutive_failures__gte=settings.PULL_FAILING_AFTER)
        .select_related("seller")
        .order_by("-consecutive_failures", "seller_id")[:limit]
    )


def after_sale_listing_failures(*, limit: int = 200) -> list[SellerSync]:
    """Sellers whose returns or refunds listing failed last time (tried at each pull)."""
    return list(
        SellerSync.objects.filter(
            Q(returns_failed_at__isnull=False) | Q(refunds_failed_at__isnull=False)
        )
        .select_related("seller__user")
        .order_by("seller_id")[:limit]
    )
