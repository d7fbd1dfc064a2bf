"""The seller's own actions on the portal: Pull now (rate-limited per seller)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from marketplace.sync.pull_now import (
    pull_now_last_requested,
    pull_now_requested,
    seller_pull_queue,
)
from sellers.models import PlatformConnection, Seller


@dataclass(frozen=True)
class PullNow:
    outcome: str  # "queued", "too_soon" or "not_connected"
    message: str
    retry_after: int = 0  # seconds, for "too_soon"


def portal_pull_now(*, seller: Seller) -> PullNow:
    """Queue a pull of the seller's own fulfillments, at most once per
    ``PORTAL_PULL_NOW_MIN_INTERVAL_SECONDS``. The seller's row is locked while the last
    request is read and the new one written, so two clicks at once queue one pull."""
    interval = settings.PORTAL_PULL_NOW_MIN_INTERVAL_SECONDS
    with transaction.atomic():
        Seller.objects.select_for_update().filter(pk=seller.pk).first()
        connection = PlatformConnection.objects.filter(seller=seller).first()
        if connection is None or not connection.is_live:
            return PullNow(
                "not_connected",
                "Not pulled: your platform account is not connected. Connect it first.",
            )
        now = timezone.now()
        last = pull_now_last_requested(seller_id=seller.pk)
        if last is not None and now - last < timedelta(seconds=interval):
            wait = max(1, math.ceil(interval - (now - last).total_seconds()))
            return PullNow(
                "too_soon",
                f"Not pulled: Pull now works once every {interval} seconds. Try again in "
                f"{wait} s (the marketplace also reads your shipments on its own every "
                f"{int(settings.PULL_INTERVAL_SECONDS)} s).",
                retry_after=wait,
            )
        pull_now_requested(seller_id=seller.pk, at=now)
        queued = seller_pull_queue(seller=seller)
    message = queued.result
    if message.startswith("Pull queued"):
        message = (
            "Pull queued: your shipments at the platform are read now; "
            "this page shows them in a few seconds."
        )
    return PullNow("queued", message)
