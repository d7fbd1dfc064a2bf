"""What the portal keeps of its own: the seller's Pull now requests (their rate limit)."""

from __future__ import annotations

from django.db import models


class SellerPullRequest(models.Model):
    """A seller's "Pull now" that was queued. The latest one per seller is the rate
    limit's clock (``PORTAL_PULL_NOW_MIN_INTERVAL_SECONDS``), kept in the database so it
    holds across web processes."""

    seller = models.ForeignKey(
        "sellers.Seller", on_delete=models.CASCADE, related_name="portal_pull_requests"
    )
    requested_at = models.DateTimeField()

    class Meta:
        ordering = ["-requested_at"]
        indexes = [models.Index(fields=["seller", "-requested_at"], name="pullrequest_latest")]

    def __str__(self) -> str:
        return f"pull now of seller {self.seller_id} at {self.requested_at:%Y-%m-%d %H:%M:%S}"
