"""What the portal keeps of its own: the seller's e-mail choices."""

from __future__ import annotations

from django.db import models


class SellerNotifications(models.Model):
    """A seller's e-mail choices (one switch per kind of "what needs you") and the
    digest's clock: at most one e-mail every ``SELLER_DIGEST_MINUTES``, and only when
    something is new since the last one (``sent_keys``: what that one named)."""

    seller = models.OneToOneField(
        "sellers.Seller", on_delete=models.CASCADE, related_name="portal_notifications"
    )
    email_problems = models.BooleanField(default=True)
    email_returns = models.BooleanField(default=True)
    email_listings = models.BooleanField(default=True)
    email_connection = models.BooleanField(default=True)
    last_digest_at = models.DateTimeField(null=True, blank=True)
    sent_keys = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["seller_id"]
        verbose_name_plural = "seller notifications"

    def __str__(self) -> str:
        return f"e-mail choices of seller {self.seller_id}"
