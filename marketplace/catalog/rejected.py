"""Rejected SKUs that last: the feed ingest records every SKU a run rejects (with the
reason) and forgets it once the SKU is accepted again, so the listing-status file can say
"rejected, because …" for each of them. Batched: one statement per batch of rows."""

from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone

from marketplace.catalog.models import RejectedSku


def rejected_skus_keep(*, seller_id: int, run_id: int, reasons: dict[str, str]) -> None:
    """Upsert ``{sku: reason}`` as rejected by this run."""
    if not reasons:
        return
    now = timezone.now()
    RejectedSku.objects.bulk_create(
        [
            RejectedSku(
                seller_id=seller_id,
                sku=sku[:128],
                reason=reason[:300],
                run_id=run_id,
                updated_at=now,
            )
            for sku, reason in reasons.items()
        ],
        update_conflicts=True,
        unique_fields=["seller", "sku"],
        update_fields=["reason", "run_id", "updated_at"],
    )


def rejected_skus_clear(*, seller_id: int, skus: Iterable[str]) -> None:
    """These SKUs were accepted: they are no longer rejected."""
    wanted = list(skus)
    if wanted:
        RejectedSku.objects.filter(seller_id=seller_id, sku__in=wanted).delete()


def rejected_skus_prune(*, seller_id: int, run_id: int) -> int:
    """After a full feed: SKUs this run did not carry are no longer rejected (the seller
    removed them); returns how many were forgotten."""
    deleted, _ = RejectedSku.objects.filter(seller_id=seller_id).exclude(run_id=run_id).delete()
    return deleted
