"""EDRTS batches (jobs) and, per product and field, when EDRTS last set it.

Times here are wall-clock (``timezone.now()``), not the sandbox clock: they measure how
fresh a product is (a change at the marketplace → processed here), which a clock shift
must not distort.
"""

from django.db import models

from sandbox.records.api_users.models import PlatformUser
from sandbox.records.databases.models import CatalogDatabase


class EdrtsJob(models.Model):
    """One batch of one request: ``PUT`` (records) or ``DELETE`` (ids) on a database."""

    QUEUED, PROCESSED, FAILED, LOST = "queued", "processed", "failed", "lost"
    STATUSES = [(s, s) for s in (QUEUED, PROCESSED, FAILED, LOST)]
    UPDATE, DELETE = "update", "delete"

    db = models.ForeignKey(CatalogDatabase, on_delete=models.CASCADE, related_name="edrts_jobs")
    correlation_id = models.CharField(max_length=64)
    batch_index = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, choices=[(UPDATE, UPDATE), (DELETE, DELETE)])
    # The records (``PUT``: objects with ``id``, values as strings) or the ids (``DELETE``).
    payload = models.JSONField()
    record_count = models.PositiveIntegerField()
    user = models.ForeignKey(PlatformUser, null=True, on_delete=models.SET_NULL, related_name="+")
    username = models.CharField(max_length=150, blank=True)
    token_name = models.CharField(max_length=200, blank=True)
    # The caller is not the database's owner: creating a product is a violation.
    marketplace = models.BooleanField(default=True)
    request_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=10, choices=STATUSES, default=QUEUED)
    # Processed no sooner than the processing delay after this (the delay in force then).
    received_at = models.DateTimeField()
    processed_at = models.DateTimeField(null=True, blank=True)
    errors = models.JSONField(default=list)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    deleted = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["status", "received_at"], name="sbx_edrts_job_due"),
            models.Index(fields=["db", "correlation_id"], name="sbx_edrts_job_corr"),
        ]

    def __str__(self) -> str:
        return f"EDRTS job {self.correlation_id}/{self.batch_index}"


class EdrtsFieldStamp(models.Model):
    """The last time EDRTS set ``field`` of the product ``key`` in ``db``, and to what."""

    db = models.ForeignKey(CatalogDatabase, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    field = models.CharField(max_length=64)
    value = models.TextField(blank=True)
    received_at = models.DateTimeField()
    set_at = models.DateTimeField()
    job = models.ForeignKey(EdrtsJob, null=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["db", "key", "field"], name="sbx_edrts_stamp_unique")
        ]

    def __str__(self) -> str:
        return f"{self.key}.{self.field}"
