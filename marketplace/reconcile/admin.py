"""Reconciliation runs and findings in the admin: read-only (the passes write them; staff
settle findings on the dashboard's Reconciliation page, where who and when are recorded)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from marketplace.reconcile.models import Finding, ReconcileRun


class _ReadOnly(admin.ModelAdmin):  # type: ignore[type-arg]
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(ReconcileRun)
class ReconcileRunAdmin(_ReadOnly):
    list_display = ("seller", "trigger", "started_at", "platform_calls", "findings_count", "error")
    list_filter = ("trigger", "after_restore")
    list_select_related = ("seller",)
    raw_id_fields = ("seller",)


@admin.register(Finding)
class FindingAdmin(_ReadOnly):
    list_display = ("created_at", "seller", "kind", "object_key", "action", "status")
    list_filter = ("status", "action", "kind")
    list_select_related = ("seller",)
    raw_id_fields = ("seller", "run")
    search_fields = ("object_key",)
