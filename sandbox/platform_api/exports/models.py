"""Exports of a database: their settings, field map, runs (with the file written) and logs."""

from django.db import models

from sandbox.common.schedule import Scheduled
from sandbox.records.databases.models import CatalogDatabase


class Export(Scheduled):
    # cron, paused, next_run_time and updated_at: ``Scheduled``.
    db = models.ForeignKey(CatalogDatabase, on_delete=models.CASCADE, related_name="exports")
    # Every setting of the Export object, as the strings answered (``exports.settings``).
    settings = models.JSONField(default=dict)
    running = models.BooleanField(default=False)
    # new, running, success, failed (our choice; README).
    status = models.CharField(max_length=20, default="new")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"export {self.id} ({self.settings.get('name', '')})"


class ExportField(models.Model):
    export = models.ForeignKey(Export, on_delete=models.CASCADE, related_name="fields")
    field_name = models.CharField(max_length=200, blank=True)
    export_field_name = models.CharField(max_length=200)
    sort_order = models.IntegerField()

    class Meta:
        ordering = ["sort_order", "id"]

    def __str__(self) -> str:
        return f"{self.field_name} -> {self.export_field_name}"


class ExportRun(models.Model):
    TRIGGERS = ("api", "schedule", "control", "page")

    export = models.ForeignKey(Export, on_delete=models.CASCADE, related_name="runs")
    trigger = models.CharField(max_length=20)
    status = models.CharField(max_length=20, default="running")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    rows = models.IntegerField(default=0)
    file_name = models.CharField(max_length=500, blank=True)
    content_type = models.CharField(max_length=100, blank=True)
    # The file exactly as written (and sent); cleared on older runs to bound the database.
    file = models.BinaryField(null=True, blank=True)
    file_size = models.IntegerField(default=0)
    delivered_to = models.CharField(max_length=2000, blank=True)
    attempts = models.IntegerField(default=0)
    error_flag = models.BooleanField(default=False)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"run {self.id} of export {self.export_id}"


class ExportLog(models.Model):
    export = models.ForeignKey(Export, on_delete=models.CASCADE, related_name="logs")
    run = models.ForeignKey(ExportRun, on_delete=models.CASCADE, related_name="logs", null=True)
    message = models.TextField()
    time = models.DateTimeField()
    error_flag = models.BooleanField(default=False)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.message[:60]
