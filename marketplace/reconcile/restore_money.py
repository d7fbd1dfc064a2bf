"""After a restore, the money (``after_restore.py``, steps 2 and 3): returns and refunds
the platform shows complete that we lack or hold open are recorded in the ledger once, from
the platform's record, through the decision path of ``returns/services`` (never a second
row for a key already there, never a payment call); what cannot be settled is left to
staff."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from marketplace.orders.models import Order
from marketplace.platform.errors import PlatformError
from marketplace.reconcile import kinds
from marketplace.reconcile.models import FindingAction
from marketplace.reconcile.restore_pass import PAGE_SIZE, RestorePass, chunks
from marketplace.returns.models import (
    Decision,
    RefundLedgerEntry,
    RefundStatus,
    Return,
    ReturnStatus,
    SellerRefund,
)
from marketplace.returns.payment_keys import refund_payment_key, return_payment_key
from marketplace.returns.services.decide import RestoreDisagrees, refund_decide, return_decide
from marketplace.returns.services.refund_versions import canonical_digest, refund_version_store
from marketplace.returns.services.return_adopt import ReturnRecordUnreadable, return_adopt
from marketplace.returns.services.return_progress import return_progress_store


class MoneyStep(RestorePass):
    def returns(self) -> None:
        pages = self.client.iter_return_pages(updated_after=self.result.since, page_size=PAGE_SIZE)
        entries = list(self.pages(pages, "returns"))
        self.result.compared["returns"] = len(entries)
        orders = {
            o.mp_order_number: o
            for o in Order.objects.filter(
                seller_id=self.seller_id,
                mp_order_number__in={str(e.get("mp_order_number") or "") for e in entries},
            )
        }
        for entry in entries:
            order = orders.get(str(entry.get("mp_order_number") or ""))
            number = str(entry.get("mp_return_number") or "")
            key = f"{entry.get('mp_order_number')}/{number}"
            if order is None:
                note = "the platform's return names an order we do not hold"
            else:
                try:
                    self._return(order, number, key, entry)
                    continue
                except (PlatformError, ReturnRecordUnreadable) as exc:
                    note = f"could not be settled: {exc}"
            self.found(
                kinds.RESTORE_RETURN_LOST,
                "return",
                key,
                ours={},
                theirs={"status": entry.get("status")},
                action=FindingAction.STAFF,
                note=note,
            )

    def _return(self, order: Order, number: str, key: str, entry: dict[str, Any]) -> None:
        status = str(entry.get("status") or "")
        return_request = Return.objects.filter(order=order, mp_return_number=number).first()
        if return_request is None:
            return_request = return_adopt(order=order, record=entry)
            self.result.returns_rebuilt += 1
            self.found(
                kinds.RESTORE_RETURN_LOST,
                "return",
                key,
                ours={},
                theirs={"status": status},
                action=FindingAction.RECORDED,
                note="rebuilt from the platform's record; not pushed again",
            )
        if status != ReturnStatus.COMPLETED:
            with transaction.atomic():
                return_progress_store(self.client, return_request, entry)
            return
        keys = {
            return_payment_key(
                mp_order_number=order.mp_order_number,
                mp_return_number=number,
                mp_line_number=line.order_line.mp_line_number,
            )
            for line in return_request.lines.select_related("order_line")
        }
        answer = self.client.get_return_refunds(order.mp_order_number, number)
        self.result.calls += 1
        raw = answer.get("merchant_refund_lines")
        theirs = {"status": status, "merchant_refund_lines": raw}
        if self._held(keys, key, "return", theirs, _return_total(raw)):
            if return_request.status != ReturnStatus.COMPLETED:
                with transaction.atomic():
                    return_progress_store(self.client, return_request, entry)
            return
        self._record(
            key,
            "return",
            theirs,
            lambda: return_decide(
                return_pk=return_request.pk,
                refund_lines=raw,
                judged_digest=canonical_digest(raw if isinstance(raw, list) else []),
                after_restore=True,
            ),
            decided=return_request.decision,
        )

    # --- refunds -------------------------------------------------------------------------

    def refunds(self) -> None:
        found: dict[str, dict[str, Any]] = {}
        # created_after is a date's "on or after": a refund completed since was created on
        # or before its completion, and one created before ``since`` that we hold open is
        # found by its order below.
        pages = self.client.iter_refund_pages(
            refund_status=[RefundStatus.COMPLETE],
            created_after=self.result.since,
            page_size=PAGE_SIZE,
        )
        for entry in self.pages(pages, "refunds"):
            found[str(entry.get("feedamp_refund_id") or "")] = entry
        held_open = sorted(
            set(
                SellerRefund.objects.filter(seller_id=self.seller_id)
                .exclude(status=RefundStatus.COMPLETE, decision=Decision.ACCEPTED)
                .values_list("order__mp_order_number", flat=True)
            )
        )
        for chunk in chunks(held_open):
            pages = self.client.iter_refund_pages(
                refund_status=[RefundStatus.COMPLETE], mp_order_numbers=chunk, page_size=PAGE_SIZE
            )
            for entry in self.pages(pages, "refunds"):
                found[str(entry.get("feedamp_refund_id") or "")] = entry
        self.result.compared["refunds"] = len(found)
        orders = {
            o.mp_order_number: o
            for o in Order.objects.filter(
                seller_id=self.seller_id,
                mp_order_number__in={str(e.get("mp_order_number") or "") for e in found.values()},
            )
        }
        for refund_id, entry in sorted(found.items()):
            order = orders.get(str(entry.get("mp_order_number") or ""))
            if refund_id and order is not None:
                self._refund(order, refund_id, entry)
            elif refund_id:
                self.found(
                    kinds.RESTORE_REFUND_UNRECORDED,
                    "refund",
                    f"{entry.get('mp_order_number')}/refund {refund_id}",
                    ours={},
                    theirs={"status": entry.get("status")},
                    action=FindingAction.STAFF,
                    note="the platform's refund names an order we do not hold",
                )

    def _refund(self, order: Order, refund_id: str, entry: dict[str, Any]) -> None:
        key = f"{order.mp_order_number}/refund {refund_id}"
        lines = [
            line for line in entry.get("merchant_refund_lines") or [] if isinstance(line, dict)
        ]
        keys = {
            refund_payment_key(
                mp_order_number=order.mp_order_number,
                refund_id=refund_id,
                mp_line_number=str(line.get("mp_line_number") or ""),
            )
            for line in lines
        }
        theirs = {"status": entry.get("status"), "merchant_refund_lines": lines}
        if self._held(keys, key, "refund", theirs, _refund_total(lines)):
            return
        held = SellerRefund.objects.filter(seller_id=self.seller_id, refund_id=refund_id).first()

        def record() -> str:
            pk = refund_version_store(
                seller_id=self.seller_id, order=order, entry=entry, listed_at=timezone.now()
            )
            if pk is None:
                raise RestoreDisagrees([])
            return refund_decide(refund_pk=pk, after_restore=True)

        self._record(key, "refund", theirs, record, decided=held.decision if held else "")

    # --- shared --------------------------------------------------------------------------

    def _held(
        self, keys: set[str], key: str, object_type: str, theirs: dict[str, Any], total: Decimal
    ) -> bool:
        """True when the ledger already holds any of ``keys`` (nothing is recorded again);
        a Finding for staff when what it holds differs from the platform's amounts."""
        rows = RefundLedgerEntry.objects.filter(payment_key__in=keys)
        if not rows.exists():
            return False
        # Compared in total: a line the decision took nothing from has no row.
        held = rows.aggregate(total=Sum("amount"))["total"] or Decimal(0)
        if held != total:
            self.found(
                kinds.RESTORE_LEDGER_DIFFERS,
                object_type,
                key,
                ours={"ledger_total": str(held), "ledger_rows": rows.count()},
                theirs={**theirs, "total": str(total)},
                action=FindingAction.STAFF,
                note="the ledger holds this with other amounts than the platform shows",
            )
        return True

    def _record(
        self,
        key: str,
        object_type: str,
        theirs: dict[str, Any],
        record: Callable[[], object],
        *,
        decided: str,
    ) -> None:
        """Record a completed refund or return in the ledger from the platform's record,
        all or nothing; a Finding either way (recorded, or left to staff with why)."""
        try:
            with transaction.atomic():
                record()
        except RestoreDisagrees as exc:
            action = FindingAction.STAFF
            note = (
                f"the platform shows it complete, our checks refuse it: {exc}"
                if exc.problems
                else f"we hold it decided ({decided or 'refused'}) while the platform shows "
                "it complete"
            )
        else:
            action = FindingAction.RECORDED
            note = "recorded in the ledger once, from the platform's record; nothing paid"
        kind = (
            kinds.RESTORE_REFUND_UNRECORDED
            if object_type == "refund"
            else kinds.RESTORE_RETURN_UNRECORDED
        )
        self.found(
            kind,
            object_type,
            key,
            ours={"decision": decided},
            theirs=_json_safe(theirs),
            action=action,
            note=note,
        )


def _json_safe(value: Any) -> Any:
    """JSON-storable: Decimals and dates as text."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _money(value: Any) -> Decimal:
    return Decimal(str(value if value is not None else 0))


def _refund_total(lines: list[dict[str, Any]]) -> Decimal:
    return sum(
        (
            _money(line.get("item_refund"))
            + _money(line.get("item_tax_refund"))
            + _money(line.get("shipping_refund"))
            + _money(line.get("shipping_tax_refund"))
            - _money(line.get("discount_refund"))
            for line in lines
        ),
        Decimal(0),
    )


def _return_total(raw: Any) -> Decimal:
    lines = [line for line in raw or [] if isinstance(line, dict)]
    return sum(
        (
            _money(line.get("principal_refund_amount")) + _money(line.get("shipping_refund_amount"))
            for line in lines
        ),
        Decimal(0),
    )
