"""The staff-action log in the Django admin: read-only (an audit trail is not edited)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from marketplace.dashboard.models import StaffAction


@admin.register(StaffAction)
class StaffActionAdmin(admin.ModelAdmin[StaffAction]):
    list_display = ("created_at", "actor_username", "kind", "seller", "order", "ok", "result")
    list_filter = ("kind", "ok")
    list_select_related = ("seller", "order")
    raw_id_fields = ("actor", "seller", "order")
    search_fields = ("actor_username", "seller__display_name", "order__mp_order_number")
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
