"""Admin for orders and their sync state. Sync rows are read-only; retry through the action."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from marketplace.orders.models import (
    ApiKey,
    Order,
    OrderLine,
    OrderSync,
    SyncEvent,
    ValidationProblem,
)
from marketplace.orders.services.push_recovery import order_sync_retry


class OrderLineInline(admin.TabularInline[OrderLine, Order]):
    model = OrderLine
    extra = 0
    can_delete = False
    # Tuples, so that one value fits both attributes' types (lists are invariant).
    readonly_fields = ("mp_line_number", "sku", "product_name", "quantity", "unit_price")
    fields = readonly_fields


class ValidationProblemInline(admin.TabularInline[ValidationProblem, Order]):
    model = ValidationProblem
    extra = 0
    can_delete = False
    readonly_fields = ("code", "mp_line_number", "message", "reported_at", "resolved_at")
    fields = readonly_fields


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin[Order]):
    list_display = ["mp_order_number", "seller", "state", "sync_status", "created_at"]
    list_filter = ["state", "sync__status"]
    search_fields = ["mp_order_number", "customer_full_name"]
    list_select_related = ["seller", "sync"]
    raw_id_fields = ["seller"]
    readonly_fields = ["intake_fingerprint", "fulfillment_status", "fulfillment_pulled_at"]
    inlines = [OrderLineInline, ValidationProblemInline]
    actions = ["retry_sync"]

    @admin.display(description="sync")
    def sync_status(self, order: Order) -> str:
        return order.sync.status if hasattr(order, "sync") else "-"

    @admin.action(description="Push the selected orders again")
    def retry_sync(self, request: HttpRequest, queryset: QuerySet[Order]) -> None:
        for order in queryset:
            order_sync_retry(order_id=order.id, actor=request.user.get_username())
        messages.info(request, f"{queryset.count()} order(s) queued")


@admin.register(OrderSync)
class OrderSyncAdmin(admin.ModelAdmin[OrderSync]):
    list_display = [
        "order",
        "status",
        "desired_version",
        "pushed_version",
        "attempts",
        "next_attempt_at",
    ]
    list_filter = ["status"]
    list_select_related = ["order"]
    raw_id_fields = ["order"]
    search_fields = ["order__mp_order_number"]

    # Written by the sync itself: a row added or edited by hand would lie about it.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(SyncEvent)
class SyncEventAdmin(admin.ModelAdmin[SyncEvent]):
    list_display = ["order", "kind", "version", "message", "actor", "created_at"]
    list_filter = ["kind"]
    list_select_related = ["order"]
    raw_id_fields = ["order"]
    search_fields = ["order__mp_order_number"]

    # Written by the sync itself: a row added or edited by hand would lie about it.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin[ApiKey]):
    list_display = ["name", "prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # keys are created with manage.py create_api_key (shown once)
