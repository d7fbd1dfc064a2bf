from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from marketplace.returns.models import (
    PlatformStep,
    RefundLedgerEntry,
    Return,
    ReturnLine,
    SellerRefund,
    SellerRefundLine,
)
from marketplace.returns.services.ledger import ledger_mark_paid_out
from marketplace.returns.services.steps import step_retry


class ReturnLineInline(admin.TabularInline):
    model = ReturnLine
    extra = 0
    raw_id_fields = ["order_line"]
    can_delete = False


@admin.register(Return)
class ReturnAdmin(admin.ModelAdmin):
    list_display = ["mp_return_number", "order", "seller", "status", "decision", "created_at"]
    list_filter = ["status", "decision"]
    list_select_related = ["order", "seller__user"]
    raw_id_fields = ["order", "seller"]
    search_fields = ["mp_return_number", "order__mp_order_number"]
    inlines = [ReturnLineInline]


class SellerRefundLineInline(admin.TabularInline):
    model = SellerRefundLine
    extra = 0
    raw_id_fields = ["order_line"]
    can_delete = False


@admin.register(SellerRefund)
class SellerRefundAdmin(admin.ModelAdmin):
    list_display = ["refund_id", "order", "seller", "status", "decision", "created_at"]
    list_filter = ["status", "decision"]
    list_select_related = ["order", "seller__user"]
    raw_id_fields = ["order", "seller"]
    search_fields = ["refund_id", "order__mp_order_number"]
    inlines = [SellerRefundLineInline]


@admin.register(RefundLedgerEntry)
class RefundLedgerEntryAdmin(admin.ModelAdmin):
    list_display = ["id", "order", "order_line", "amount", "currency", "paid_out_at", "created_at"]
    list_filter = ["currency"]
    list_select_related = ["order", "order_line"]
    raw_id_fields = ["order", "order_line", "refund", "return_request"]
    readonly_fields = ["amount", "currency", "detail", "paid_out_at", "paid_out_by"]
    actions = ["mark_paid_out"]

    @admin.action(description="Mark paid out")
    def mark_paid_out(self, request: HttpRequest, queryset: QuerySet[RefundLedgerEntry]) -> None:
        marked = ledger_mark_paid_out(
            entry_ids=queryset.values_list("pk", flat=True),
            actor=request.user.get_username(),
        )
        self.message_user(request, f"{marked} entries marked paid out", messages.SUCCESS)


@admin.register(PlatformStep)
class PlatformStepAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "attempts", "failures", "next_attempt_at"]
    list_filter = ["kind", "status"]
    raw_id_fields = ["seller", "return_request", "refund"]
    actions = ["retry"]

    @admin.action(description="Retry now")
    def retry(self, request: HttpRequest, queryset: QuerySet[PlatformStep]) -> None:
        retried = sum(step_retry(step_id=pk) for pk in queryset.values_list("pk", flat=True))
        self.message_user(request, f"{retried} steps queued", messages.SUCCESS)
