"""The record of every HTTP call made to the platform."""

from __future__ import annotations

from django.db import models


class PlatformCall(models.Model):
    """One HTTP exchange with the platform (or one attempt that got no answer).

    Excerpts are redacted and truncated before they are stored: the log explains
    what happened without becoming a second copy of tokens or buyer data.
    """

    seller = models.ForeignKey(
        "sellers.Seller", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    order_number = models.CharField(max_length=128, blank=True, db_index=True)
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=512)
    # None when no response arrived (timeout, connection error).
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    attempt = models.PositiveSmallIntegerField(default=1)
    request_excerpt = models.TextField(blank=True)
    response_excerpt = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["seller", "-created_at"], name="platformcall_seller_recent")
        ]

    def __str__(self) -> str:
        return f"{self.method} {self.path} → {self.status or self.error}"

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class HolderEmbargo(models.Model):
    """The platform asked us not to call for ``holder`` (a seller's order calls, or the
    API user's calls) before ``not_before``. Read when Redis is not configured or not
    answering, and copied back into Redis after it lost its data; see ``embargo.py``."""

    holder = models.CharField(max_length=200, unique=True)
    not_before = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "holder embargo"
        verbose_name_plural = "holder embargoes"
        ordering = ["holder"]
        # The restore reads only the waits still running.
        indexes = [models.Index(fields=["not_before"], name="holderembargo_not_before")]

    def __str__(self) -> str:
        return f"{self.holder} held until {self.not_before:%H:%M:%S}"
