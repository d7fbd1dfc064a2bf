"""The dashboard's own record: which staff member pressed which button, and what came of it.

The services underneath record their part too (``SyncEvent.actor``, ``ConnectionEvent.actor``),
but "refresh now" and "pull now" have no actor in their history, so every dashboard action
is written here as well: one place that answers "who did what, when, and did it work".
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class StaffAction(models.Model):
    class Kind(models.TextChoices):
        ORDER_RETRY = "order_retry", "Retry push"
        SELLER_RETRY_FAILED = "seller_retry_failed", "Retry failed pushes"
        CONNECTION_REFRESH = "connection_refresh", "Refresh connection"
        SELLER_PULL = "seller_pull", "Pull now"
        CONNECTION_DISCONNECT = "connection_disconnect", "Disconnect"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept as text too: the record must still say who it was after the user is deleted.
    actor_username = models.CharField(max_length=150)
    seller = models.ForeignKey(
        "sellers.Seller", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    order = models.ForeignKey(
        "orders.Order", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    ok = models.BooleanField()
    result = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["seller", "-created_at"], name="staffaction_seller_recent"),
            models.Index(fields=["order", "-created_at"], name="staffaction_order_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_username}: {self.get_kind_display()} ({'ok' if self.ok else 'failed'})"


class ActivitySnapshot(models.Model):
    """The overview's whole-table aggregates as of ``computed_at`` (see ``activity``)."""

    computed_at = models.DateTimeField(db_index=True)
    data = models.JSONField()

    class Meta:
        ordering = ["-computed_at"]

    def __str__(self) -> str:
        return f"activity as of {self.computed_at:%Y-%m-%d %H:%M:%S}"
