"""Admin for sellers and their connections: expiry times and fingerprints, never tokens."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from sellers import services
from sellers.errors import VaultError
from sellers.models import ConnectionEvent, PlatformConnection, Seller


@admin.register(Seller)
class SellerAdmin(admin.ModelAdmin[Seller]):
    list_display = ("display_name", "user", "platform_username", "created_at")
    list_select_related = ("user",)
    raw_id_fields = ("user",)
    search_fields = ("display_name", "user__username", "platform_username")
    readonly_fields = ("created_at", "updated_at")


@admin.register(PlatformConnection)
class PlatformConnectionAdmin(admin.ModelAdmin[PlatformConnection]):
    # The ciphertext columns are editable=False and listed nowhere here: not even the
    # ciphertext reaches a page. A short fingerprint tells grants apart.
    fields = (
        "seller",
        "state",
        "access_token_expires_at",
        "refresh_token_expires_at",
        "access_fingerprint",
        "refresh_fingerprint",
        "connected_at",
        "last_refreshed_at",
        "last_error",
        "generation",
        "refresh_queued_at",
        "refresh_warning_30d_sent_at",
        "refresh_warning_7d_sent_at",
        "refresh_warning_1d_sent_at",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    list_display = (
        "seller",
        "state",
        "access_token_expires_at",
        "refresh_token_expires_at",
        "last_refreshed_at",
    )
    list_filter = ("state",)
    list_select_related = ("seller",)
    raw_id_fields = ("seller",)
    search_fields = ("seller__display_name", "seller__user__username")
    actions = ["disconnect_selected"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # connections come from the OAuth flow only

    @admin.display(description="Access token (sha256 prefix)")
    def access_fingerprint(self, obj: PlatformConnection) -> str:
        try:
            return obj.access_token_fingerprint or "—"
        except VaultError:
            return "undecryptable (check TOKEN_ENCRYPTION_KEYS)"

    @admin.display(description="Refresh token (sha256 prefix)")
    def refresh_fingerprint(self, obj: PlatformConnection) -> str:
        try:
            return obj.refresh_token_fingerprint or "—"
        except VaultError:
            return "undecryptable (check TOKEN_ENCRYPTION_KEYS)"

    @admin.action(description="Disconnect selected (wipe stored tokens)")
    def disconnect_selected(
        self, request: HttpRequest, queryset: QuerySet[PlatformConnection]
    ) -> None:
        for connection in queryset:
            services.connection_disconnect(connection_id=connection.id, actor=request.user)
        self.message_user(request, f"Disconnected {queryset.count()} connection(s).", messages.INFO)


@admin.register(ConnectionEvent)
class ConnectionEventAdmin(admin.ModelAdmin[ConnectionEvent]):
    list_display = ("created_at", "seller", "kind", "detail", "actor")
    list_filter = ("kind",)
    list_select_related = ("seller", "actor")
    raw_id_fields = ("seller", "actor")
    search_fields = ("seller__display_name", "detail")
    readonly_fields = ("seller", "kind", "detail", "actor", "created_at")
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # an audit trail is not edited
