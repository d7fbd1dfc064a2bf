"""What the privacy app keeps of its own: which orders' buyer data is gone, erasures
people asked for (without the personal data they named), and orders waiting to close
before their erasure can be applied.

* ``ErasedOrder``: an order whose buyer data was replaced by a pseudonym (by the
  retention job or on request); the retention job skips it.
* ``BuyerErasure``: one erasure on request: who asked, when, how many records it
  touched. The e-mail only as a keyed hash (``erasure.email_hash``), so "was this buyer
  erased?" can be answered later without keeping the address.
* ``PendingErasure``: an order of an erased buyer that was still open (the platform
  still needed its address); the retention job erases it as soon as it closes.
* ``TaskDeadLetter``: a task message dropped after ``CELERY_TASK_MAX_DELIVERIES``
  deliveries (its worker died each time; ``marketplace/celery.py``), shown in the admin.
"""

from __future__ import annotations

from django.db import models


class ErasedWhy(models.TextChoices):
    RETENTION = "retention", "Retention period over"
    REQUEST = "request", "Erased on the buyer's request"


class ErasedOrder(models.Model):
    Why = ErasedWhy

    order = models.OneToOneField(
        "orders.Order", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    why = models.CharField(max_length=16, choices=ErasedWhy.choices)
    erased_at = models.DateTimeField()

    class Meta:
        ordering = ["-erased_at"]

    def __str__(self) -> str:
        return f"order {self.order_id} erased ({self.why})"


class BuyerErasure(models.Model):
    email_hash = models.CharField(max_length=64, db_index=True)
    requested_by = models.CharField(max_length=150)
    orders_erased = models.PositiveIntegerField(default=0)
    orders_pending = models.PositiveIntegerField(default=0)
    returns_erased = models.PositiveIntegerField(default=0)
    calls_deleted = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the last of its pending orders closed and was erased (now, when none was open).
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"erasure {self.pk} by {self.requested_by} at {self.created_at:%Y-%m-%d %H:%M}"


class PendingErasure(models.Model):
    order = models.OneToOneField("orders.Order", on_delete=models.CASCADE, related_name="+")
    erasure = models.ForeignKey(BuyerErasure, on_delete=models.CASCADE, related_name="pending")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"order {self.order_id} waits to close (erasure {self.erasure_id})"


class TaskDeadLetter(models.Model):
    """Which task, which message, how often it was delivered: no arguments (they name
    rows by id; the row itself says what was pending)."""

    task_name = models.CharField(max_length=200)
    task_id = models.CharField(max_length=64)
    deliveries = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.task_name}[{self.task_id}] dropped after {self.deliveries} deliveries"
