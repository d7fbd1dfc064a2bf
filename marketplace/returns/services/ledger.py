"""The staff and payments side's steps on the refund ledger, each recorded in the money
log (``MoneyAction``: who, when, what).

* Paid out: the payments system pays the buyer and then marks the entry (the admin's
  "Mark paid out" action, or ``manage.py mark_refunds_paid_out``). A conditional update:
  an entry is marked once, whoever marks it again changes nothing. It is the one change
  the ledger's trigger lets through (``append_only.py``).
* Reverse: a correction is never an edit: a new entry of the opposite amount that
  ``reverses`` the wrong one, with the staff user and the reason. The line's room to be
  refunded grows back by that amount (the ledger's sum per line is what was accepted).
* Retry: staff re-queueing a refund or return step is money work too, and logged here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from marketplace.returns.models import (
    MoneyAction,
    MoneyActionKind,
    PlatformStep,
    RefundLedgerEntry,
)
from marketplace.returns.payment_keys import reversal_payment_key
from marketplace.returns.services.steps import step_retry


class LedgerRefused(Exception):
    """A ledger step that cannot be done (already reversed, a reversing entry, no reason)."""


def money_action_record(
    *, kind: str, actor: str, subject: str = "", detail: dict[str, Any] | None = None
) -> MoneyAction:
    return MoneyAction.objects.create(
        kind=kind, actor=actor[:150], subject=subject[:200], detail=detail or {}
    )


def ledger_mark_paid_out(
    *, actor: str, entry_ids: Iterable[int] = (), payment_keys: Iterable[str] = ()
) -> int:
    """Mark these entries paid out (those not paid yet), named by id or by
    ``payment_key`` (what the payments side pays against: after a restore it re-applies
    its marks by key, ``payment_keys.py``); returns how many were marked."""
    ids = sorted(set(entry_ids))
    keys = sorted({key.strip() for key in payment_keys if key.strip()})
    with transaction.atomic():
        marked = list(
            RefundLedgerEntry.objects.select_for_update()
            .filter(Q(pk__in=ids) | Q(payment_key__in=keys), paid_out_at__isnull=True)
            .order_by("pk")
            .values_list("pk", "payment_key")
        )
        RefundLedgerEntry.objects.filter(
            pk__in=[pk for pk, _ in marked], paid_out_at__isnull=True
        ).update(paid_out_at=timezone.now(), paid_out_by=actor[:150])
        detail: dict[str, Any] = {"asked": ids, "marked": [pk for pk, _ in marked]}
        if keys:
            detail["asked_keys"] = keys
            detail["marked_keys"] = [key for _, key in marked]
        money_action_record(
            kind=MoneyActionKind.MARK_PAID_OUT,
            actor=actor,
            subject=f"{len(marked)} ledger entries",
            detail=detail,
        )
    return len(marked)


def ledger_keys_missing(*, payment_keys: Iterable[str]) -> list[str]:
    """The keys the ledger does not hold (after a restore: a row the after-restore
    reconciliation has not rebuilt yet; its mark must be applied again once it is)."""
    keys = {key.strip() for key in payment_keys if key.strip()}
    held = set(
        RefundLedgerEntry.objects.filter(payment_key__in=keys).values_list("payment_key", flat=True)
    )
    return sorted(keys - held)


def ledger_reverse(*, entry_id: int, actor: str, reason: str) -> RefundLedgerEntry:
    """Cancel entry ``entry_id`` with a reversing entry (its negative), once."""
    reason = reason.strip()
    if not reason:
        raise LedgerRefused("a reversal needs a reason")
    if not actor:
        raise LedgerRefused("a reversal needs the staff user who makes it")
    with transaction.atomic():
        entry = RefundLedgerEntry.objects.select_for_update().get(pk=entry_id)
        if entry.reverses_id is not None:
            raise LedgerRefused(f"entry {entry.pk} is itself a reversal")
        if RefundLedgerEntry.objects.filter(reverses=entry).exists():
            raise LedgerRefused(f"entry {entry.pk} is already reversed")
        reversal = RefundLedgerEntry.objects.create(
            order_id=entry.order_id,
            order_line_id=entry.order_line_id,
            refund_id=entry.refund_id,
            return_request_id=entry.return_request_id,
            currency=entry.currency,
            amount=-entry.amount,
            payment_key=reversal_payment_key(entry.payment_key),
            detail={"reverses": entry.pk},
            reverses=entry,
            reason=reason,
            created_by=actor[:150],
        )
        money_action_record(
            kind=MoneyActionKind.REVERSE,
            actor=actor,
            subject=f"ledger entry {entry.pk}",
            detail={
                "entry": entry.pk,
                "reversal": reversal.pk,
                "amount": str(reversal.amount_in_unit),
                "currency": entry.currency,
                "reason": reason,
            },
        )
    return reversal


def step_retry_by_staff(*, step_id: int, actor: str) -> bool:
    """Staff's retry of a refund or return step (``steps.step_retry``), logged."""
    retried = step_retry(step_id=step_id)
    step = PlatformStep.objects.filter(pk=step_id).values("kind", "refund_id", "return_request_id")
    money_action_record(
        kind=MoneyActionKind.RETRY_STEP,
        actor=actor,
        subject=f"step {step_id}",
        detail={"step": step_id, "queued": retried, **(step.first() or {})},
    )
    return retried
