"""Errors belong to the version they judged: what an errors call finds when it re-reads.

Before an errors call is sent (or sent again), ``steps.py`` reads the refund (or the
return's refund amounts) as the platform holds it now. The call goes only while the
platform still holds the lines the decision judged, and the record is still ``CREATED``
(a return: ``REFUNDED``). Otherwise it is dropped (``SUPERSEDED``) and the decision is
cleared here, so the next pull decides the current version: TRAPS.md's race (the first
call timed out, the seller corrected the refund, a blind retry paused the corrected
version with the old errors) cannot happen.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F
from django.utils import timezone

from marketplace.returns.models import (
    Decision,
    PlatformStep,
    RefundStatus,
    Return,
    ReturnStatus,
    SellerRefund,
    StepKind,
)
from marketplace.returns.services.refund_versions import canonical_digest, lines_digest

ALREADY_PAUSED = "already paused on the lines it judged (an earlier call went through)"


def refund_errors_stale(current: dict[str, Any], step: PlatformStep) -> str:
    """Why an errors call no longer fits the refund as the platform holds it ("" when it
    does; ``ALREADY_PAUSED`` when our earlier call went through)."""
    status = str(current.get("status") or "")
    same = not step.judged_digest or lines_digest(current) == step.judged_digest
    if not same:
        return f"the seller changed the refund's lines (now {status}): deciding it again"
    if status == "CREATED":
        return ""
    if status == "PAUSED":
        return ALREADY_PAUSED
    return f"the refund is {status or 'without a state'} now, not CREATED"


def return_errors_stale(current: dict[str, Any], step: PlatformStep) -> str:
    """Why an errors call no longer fits the return's refund amounts ("" when it does)."""
    status = str(current.get("status") or "")
    raw = current.get("merchant_refund_lines")
    judged = canonical_digest(raw if isinstance(raw, list) else [])
    if step.judged_digest and judged != step.judged_digest:
        return f"the seller changed the return's refund amounts (now {status}): deciding again"
    if status != ReturnStatus.REFUNDED:
        return f"the return is {status or 'without a state'} now, not REFUNDED"
    return ""


def decision_drop(step: PlatformStep) -> None:
    """An errors call dropped: its decision no longer fits what the platform holds. The
    decision is cleared so the next pull decides the current version (a refund: as a new
    version, its lines read again)."""
    now = timezone.now()
    if step.kind == StepKind.REPORT_REFUND:
        SellerRefund.objects.filter(
            pk=step.refund_id or 0, version=step.version, decision=Decision.REFUSED
        ).update(
            decision=Decision.NONE,
            decided_at=None,
            version=F("version") + 1,
            lines_digest="",
            status=RefundStatus.CREATED,
            updated_at=now,
        )
    elif step.kind == StepKind.REPORT_RETURN:
        Return.objects.filter(pk=step.return_request_id or 0, decision=Decision.REFUSED).update(
            decision=Decision.NONE, decided_at=None, platform_digest="", updated_at=now
        )
