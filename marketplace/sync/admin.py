from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from marketplace.sync.models import SellerSync


@admin.register(SellerSync)
class SellerSyncAdmin(admin.ModelAdmin[SellerSync]):
    """Each seller's pull schedule and pull state (written by the pulls, read-only here)."""

    list_display = (
        "seller",
        "next_pull_at",
        "reason",
        "consecutive_failures",
        "last_success_at",
        "last_error",
    )
    list_select_related = ("seller",)
    raw_id_fields = ("seller",)
    search_fields = ("seller__display_name", "reason")

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return [field.name for field in SellerSync._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # the connect and the first pull of a seller create it
