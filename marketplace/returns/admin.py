"""Admin of returns and refunds. Money is read-only here: the ledger and the money log
cannot be added to, changed or deleted (their rows are append-only in the database too,
``append_only.py``); a seller refund and a return show their decision and amounts but
never let them be edited. Staff's money steps are actions, each logged with who and when:
mark paid out, reverse an entry (with a reason), retry a platform step."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, TypeVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from marketplace.returns.models import (
    MoneyAction,
    PlatformStep,
    RefundLedgerEntry,
    Return,
    ReturnLine,
    SellerRefund,
    SellerRefundLine,
)
from marketplace.returns.services.ledger import (
    LedgerRefused,
    ledger_mark_paid_out,
    ledger_reverse,
    step_retry_by_staff,
)

_M = TypeVar("_M", bound=Model)
_Parent = TypeVar("_Parent", bound=Model)


class ReadOnlyAdmin(admin.ModelAdmin[_M]):
    """View only: no add, change or delete, whoever asks (superusers too)."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline[_M, _Parent]):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReturnLineInline(ReadOnlyInline[ReturnLine, Return]):
    model = ReturnLine
    raw_id_fields = ["order_line"]


@admin.register(Return)
class ReturnAdmin(admin.ModelAdmin[Return]):
    list_display = ["mp_return_number", "order", "seller", "status", "decision", "created_at"]
    list_filter = ["status", "decision"]
    list_select_related = ["order", "seller__user"]
    raw_id_fields = ["order", "seller"]
    search_fields = ["mp_return_number", "order__mp_order_number"]
    # The platform's state and our decision are facts, not settings.
    readonly_fields = [
        "status",
        "rma",
        "authorized_at",
        "decision",
        "decided_at",
        "errors",
        "pulled_at",
    ]
    inlines = [ReturnLineInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # returns come through the intake API

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SellerRefundLineInline(ReadOnlyInline[SellerRefundLine, SellerRefund]):
    model = SellerRefundLine
    raw_id_fields = ["order_line"]


@admin.register(SellerRefund)
class SellerRefundAdmin(ReadOnlyAdmin[SellerRefund]):
    """A seller's refund as pulled, with our decision: nothing here is ours to edit."""

    list_display = ["refund_id", "order", "seller", "status", "decision", "created_at"]
    list_filter = ["status", "decision"]
    list_select_related = ["order", "seller__user"]
    raw_id_fields = ["order", "seller"]
    search_fields = ["refund_id", "order__mp_order_number"]
    inlines = [SellerRefundLineInline]


class ReverseForm(ActionForm):
    reason = forms.CharField(
        required=False, max_length=500, help_text="Why (required to reverse an entry)"
    )


@admin.register(RefundLedgerEntry)
class RefundLedgerEntryAdmin(ReadOnlyAdmin[RefundLedgerEntry]):
    list_display = [
        "id",
        "payment_key",
        "order",
        "order_line",
        "amount_in_unit",
        "currency",
        "reverses",
        "paid_out_at",
        "created_at",
    ]
    list_filter = ["currency"]
    # The payments side looks an entry up by the key it paid against.
    search_fields = ["=payment_key", "order__mp_order_number"]
    list_select_related = ["order", "order_line"]
    raw_id_fields = ["order", "order_line", "refund", "return_request", "reverses"]
    actions = ["mark_paid_out", "reverse"]
    action_form = ReverseForm

    @admin.display(description="amount")
    def amount_in_unit(self, entry: RefundLedgerEntry) -> Decimal:
        return entry.amount_in_unit

    def has_money_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    @admin.action(description="Mark paid out", permissions=["money"])
    def mark_paid_out(self, request: HttpRequest, queryset: QuerySet[RefundLedgerEntry]) -> None:
        marked = ledger_mark_paid_out(
            entry_ids=queryset.values_list("pk", flat=True),
            actor=request.user.get_username(),
        )
        self.message_user(request, f"{marked} entries marked paid out", messages.SUCCESS)

    @admin.action(description="Reverse (a new entry of the opposite amount)", permissions=["money"])
    def reverse(self, request: HttpRequest, queryset: QuerySet[RefundLedgerEntry]) -> None:
        reason = str(request.POST.get("reason") or "").strip()
        if not reason:
            self.message_user(request, "Give a reason to reverse an entry.", messages.ERROR)
            return
        for pk in queryset.order_by("pk").values_list("pk", flat=True):
            try:
                reversal = ledger_reverse(
                    entry_id=pk, actor=request.user.get_username(), reason=reason
                )
            except LedgerRefused as exc:
                self.message_user(request, f"Entry {pk}: {exc}", messages.ERROR)
            else:
                self.message_user(
                    request, f"Entry {pk} reversed by entry {reversal.pk}", messages.SUCCESS
                )


@admin.register(MoneyAction)
class MoneyActionAdmin(ReadOnlyAdmin[MoneyAction]):
    list_display = ["created_at", "kind", "actor", "subject"]
    list_filter = ["kind"]
    search_fields = ["actor", "subject"]


@admin.register(PlatformStep)
class PlatformStepAdmin(admin.ModelAdmin[PlatformStep]):
    list_display = ["id", "kind", "status", "attempts", "failures", "next_attempt_at"]
    list_filter = ["kind", "status"]
    raw_id_fields = ["seller", "return_request", "refund"]
    # What is sent (a refusal's errors) is the decision's, not editable.
    readonly_fields = ["kind", "seller", "return_request", "refund", "body"]
    actions = ["retry"]

    @admin.action(description="Retry now")
    def retry(self, request: HttpRequest, queryset: QuerySet[PlatformStep]) -> None:
        actor = request.user.get_username()
        retried = sum(
            step_retry_by_staff(step_id=pk, actor=actor)
            for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"{retried} steps queued", messages.SUCCESS)
