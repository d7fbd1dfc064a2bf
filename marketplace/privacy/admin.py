"""Erasures in the Django admin: read-only (a record of what was done is not edited)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from marketplace.privacy.models import BuyerErasure, TaskDeadLetter


@admin.register(BuyerErasure)
class BuyerErasureAdmin(admin.ModelAdmin[BuyerErasure]):
    list_display = (
        "created_at",
        "requested_by",
        "orders_erased",
        "orders_pending",
        "returns_erased",
        "calls_deleted",
        "completed_at",
    )
    # The hash is not shown: it only helps whoever already knows the address.
    exclude = ("email_hash",)
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(TaskDeadLetter)
class TaskDeadLetterAdmin(admin.ModelAdmin[TaskDeadLetter]):
    list_display = ("created_at", "task_name", "task_id", "deliveries")
    search_fields = ("task_name", "task_id")
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
