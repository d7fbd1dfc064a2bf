"""What a listed (or re-read) return tells us: its state, RMA, notes, and once the seller
refunded it, the seller's amounts, decided.

States (the reference, ``…/returns/get-return-refunds``): ``AWAITING_AUTHORIZATION`` →
``AUTHORIZED`` → ``REFUNDED`` → ``COMPLETED``. A seller's refusal has no published state:
under the reference's reading the return simply stays awaiting authorization (listed as
overdue after ``RETURN_AUTHORIZATION_DAYS``, ``selectors.py``); the sandbox's reading B
sends ``REJECTED`` with the reason in ``notes``. Any other state is stored as it is, shown
as it is, and never acted on: only ``REFUNDED`` leads to a decision.

The first pull that sees the return ``AUTHORIZED``, ``REFUNDED`` or ``COMPLETED`` (a fully
preauthorized return may be refunded straight from awaiting authorization) stamps
``authorized_at``, once: the seller's authorization wait of the scorecards
(``marketplace/performance``). A refused return never gets one.
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Case, F, Value, When
from django.utils import timezone

from marketplace.platform.order_source import OrderSourceClient
from marketplace.returns.models import Return, ReturnStatus
from marketplace.returns.services.decide import return_decide
from marketplace.returns.services.refund_versions import canonical_digest

STATUS_CHARS = 32
# The states a return reaches only once the seller authorized it (or refunded it directly).
AUTHORIZED_STATES = frozenset(
    {ReturnStatus.AUTHORIZED, ReturnStatus.REFUNDED, ReturnStatus.COMPLETED}
)


def return_progress_store(
    client: OrderSourceClient, return_request: Return, entry: dict[str, Any]
) -> tuple[bool, bool]:
    """Store what ``entry`` (a listing's or ``GET``'s return) says; decide a refunded
    return not decided yet. ``(changed, decided)``. Call inside the record's savepoint."""
    seen = canonical_digest(entry)
    status = str(entry.get("status") or "")[:STATUS_CHARS]
    if seen == return_request.platform_digest and (
        return_request.decision or status != ReturnStatus.REFUNDED
    ):
        return False, False  # listed again by the overlap: nothing new
    values: dict[str, Any] = {
        "platform_digest": seen,
        "pulled_at": timezone.now(),
        "rma": str(entry.get("rma") or "")[:128],
        "notes": _text(entry.get("notes")),
        "updated_at": timezone.now(),
    }
    # Stored as it is, known or not (shown to staff); never back from COMPLETED (we set it
    # when our "complete" was answered).
    if status and return_request.status != ReturnStatus.COMPLETED:
        values["status"] = status
    if status in AUTHORIZED_STATES:
        # Only on the move out of AWAITING_AUTHORIZATION, judged in the UPDATE on the
        # stored row (not this possibly stale instance): listed again, the first sighting
        # stays; a return already past it before authorized_at existed is not stamped
        # with today (its wait is unknown, not "until this pull").
        values["authorized_at"] = Case(
            When(
                status=ReturnStatus.AWAITING_AUTHORIZATION,
                authorized_at__isnull=True,
                then=Value(values["pulled_at"]),
            ),
            default=F("authorized_at"),
        )
    Return.objects.filter(pk=return_request.pk).update(**values)
    if status != ReturnStatus.REFUNDED or return_request.decision:
        return True, False
    answer = client.get_return_refunds(
        return_request.order.mp_order_number, return_request.mp_return_number
    )
    raw = answer.get("merchant_refund_lines")
    # As sent: the decision reads the amounts strictly (amounts.py) and refuses what it
    # cannot read with its code; the digest names what it judged.
    judged = canonical_digest(raw if isinstance(raw, list) else [])
    return_decide(return_pk=return_request.pk, refund_lines=raw, judged_digest=judged)
    return True, True


def _text(value: Any) -> str:
    """``notes`` as text (any JSON value is kept readable)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
