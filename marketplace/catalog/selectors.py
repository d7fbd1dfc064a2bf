"""Reads for the catalog pages."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Min, Q, QuerySet
from django.utils import timezone

from marketplace.catalog.models import CatalogSource, FeedRun, Listing, StatusChange, StatusSync


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


@dataclass(frozen=True)
class StatusSyncSummary:
    """A seller's listing statuses on their way through EDRTS (the staff pages)."""

    enabled: bool = True
    waiting: int = 0
    sent_last_hour: int = 0
    oldest_waiting_at: datetime | None = None
    failures: int = 0
    last_error: str = ""
    last_error_at: datetime | None = None
    last_sent_at: datetime | None = None

    @property
    def oldest_waiting_seconds(self) -> int | None:
        if self.oldest_waiting_at is None:
            return None
        return max(0, int((timezone.now() - self.oldest_waiting_at).total_seconds()))

    @property
    def stopped(self) -> bool:
        return self.failures >= settings.EDRTS_MAX_FAILURES


def status_sync_summaries(*, seller_ids: Iterable[int]) -> dict[int, StatusSyncSummary]:
    """Per seller: changes waiting (and the oldest one's time), sent in the last hour, the
    switch and the last error. Three aggregate queries, whatever the number of sellers
    (through the outbox's partial indexes)."""
    ids = list(seller_ids)
    if not ids:
        return {}
    waiting: dict[int, dict[str, Any]] = {
        row["seller_id"]: dict(row)
        for row in StatusChange.objects.filter(seller_id__in=ids, sent_at__isnull=True)
        .values("seller_id")
        .annotate(n=Count("id"), oldest=Min("created_at"))
        .order_by()
    }
    sent = dict(
        StatusChange.objects.filter(
            seller_id__in=ids,
            sent_at__gte=timezone.now() - timedelta(hours=1),
            outcome=StatusChange.Outcome.SENT,
        )
        .values("seller_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("seller_id", "n")
    )
    syncs = {sync.seller_id: sync for sync in StatusSync.objects.filter(seller_id__in=ids)}
    summaries = {}
    for seller_id in ids:
        sync = syncs.get(seller_id)
        wait: dict[str, Any] = waiting.get(seller_id) or {}
        summaries[seller_id] = StatusSyncSummary(
            enabled=sync.edrts_enabled if sync else True,
            waiting=wait.get("n", 0),
            sent_last_hour=sent.get(seller_id, 0),
            oldest_waiting_at=wait.get("oldest"),
            failures=sync.failures if sync else 0,
            last_error=sync.last_error if sync else "",
            last_error_at=sync.last_error_at if sync else None,
            last_sent_at=sync.last_sent_at if sync else None,
        )
    return summaries
