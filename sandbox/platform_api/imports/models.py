"""Imports of a database: their settings, delimiters, file map, schedule and run logs."""

from django.db import models

from sandbox.common.schedule import Scheduled
from sandbox.records.databases.models import CatalogDatabase


class Import(Scheduled):
    # cron, paused, next_run_time and updated_at: ``Scheduled``.
    db = models.ForeignKey(CatalogDatabase, on_delete=models.CASCADE, related_name="imports")
    # Create/update settings as the strings answered (``imports.settings``); the password is
    # kept to fetch the file, never answered.
    settings = models.JSONField(default=dict)
    # {encoding, separator, enclosure, escaper, file_type} exactly as given; null until the
    # delimiters call (the file map is refused before it).
    delimiters = models.JSONField(null=True, blank=True)
    # {maps: {decoded source name or position: target}, ignore_join, name_based_maps,
    # encode_source_file_keys, clean_file_headers}; null until set.
    file_map = models.JSONField(null=True, blank=True)
    running = models.BooleanField(default=False)
    # new, running, success, failed (our choice; README).
    status = models.CharField(max_length=20, default="new")
    last_download_time = models.DateTimeField(null=True, blank=True)
    # When the latest run started (the databases' import_status follows the latest one).
    last_run_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"import {self.id} ({self.settings.get('name', '')})"


class ImportLog(models.Model):
    source = models.ForeignKey(Import, on_delete=models.CASCADE, related_name="logs")
    message = models.TextField()
    time = models.DateTimeField()
    error_flag = models.BooleanField(default=False)
    # The counts of the run this log closes (zero on a failed attempt's log).
    rows = models.IntegerField(default=0)
    matched = models.IntegerField(default=0)
    unmatched = models.IntegerField(default=0)
    bad_lines = models.IntegerField(default=0)
    created = models.IntegerField(default=0)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.message[:60]
