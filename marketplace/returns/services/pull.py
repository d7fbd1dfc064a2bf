"""Pulling a seller's returns' progress and the seller's own refunds.

Cost follows open work, not history
-----------------------------------
Per seller, and only when something can be found (``selectors``: open returns; orders a
seller may still refund), one listing of ``GET /refunds`` and one of ``GET /returns``:

* Refunds: ``refund_status=CREATED`` and the cursor. The reference has no update-time
  filter on refunds (``…/refunds/get-orders-refunds``), and a refund the seller corrects
  after a pause comes back ``CREATED`` with its old creation date: the set to decide is
  exactly the ``CREATED`` ones, bounded by open work (a seller with 10 000 completed
  refunds and 10 new ones makes the same requests as one with 100). Each is stored as the
  current version of its row and decided (``refund_versions.py``).
* Returns: ``updated_after`` (our choice; strictly after) and the cursor, no ``status``
  filter: ``REJECTED`` is no published state (a strict platform refuses the filter), and a
  state we do not know must still reach staff. The watermark is *our* clock at the start
  of the last complete listing, less ``PULL_CURSOR_OVERLAP``; what the overlap lists again
  is matched by a digest and costs nothing. A listed ``REFUNDED`` return not decided costs
  one more request (its amounts). Returns that need another look (a failed record, a
  decision dropped because the seller's amounts changed) are read by their own ``GET``.

One listing never stops the other: each runs and fails on its own, its failure kept on
``SellerReturnsPullState`` (staff see it) and retried at the next pull. One record never
stops its page: each is stored and decided in its own savepoint (``record_problems.py``).

Per seller one pull at a time: a lease on ``SellerReturnsPullState`` (conditional
UPDATE, no lock held during HTTP).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from marketplace.platform.order_source import OrderSourceClient
from marketplace.returns.selectors import seller_has_open_returns, seller_may_get_refunds
from marketplace.returns.services.pull_state import (
    ReturnsPullResult,
    pull_lease_claim,
    pull_state_save,
)
from marketplace.returns.services.refund_listing import refunds_list
from marketplace.returns.services.return_listing import returns_list
from sellers.models import PlatformConnection
from sellers.token_source import order_client_for

logger = logging.getLogger(__name__)

__all__ = ["ReturnsPullResult", "seller_returns_pull", "sellers_returns_pull_fan_out"]


# --- the pull -----------------------------------------------------------------------------


def seller_returns_pull(
    *, seller_id: int, client: OrderSourceClient | None = None
) -> ReturnsPullResult:
    """Read this seller's open refunds and changed returns, and decide them."""
    result = ReturnsPullResult(seller_id=seller_id)
    want_returns = seller_has_open_returns(seller_id=seller_id)
    want_refunds = seller_may_get_refunds(seller_id=seller_id)
    if not (want_returns or want_refunds):
        return result
    if client is None:
        connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
        if connection is None or not connection.is_live:
            result.returns_error = result.refunds_error = "not connected"
            return result
        client = order_client_for(connection, hold_wait=settings.PULL_HOLD_MAX_WAIT)
    claimed = pull_lease_claim(seller_id)
    if claimed is None:
        return result
    token, state = claimed
    result.ran = True
    saved: dict[str, Any] = {}
    try:
        if want_refunds:
            result.refunds_error = _listing_run(
                lambda: refunds_list(client, seller_id, result), seller_id, "refunds"
            )
            saved.update(_outcome("refunds", result.refunds_error))
        if want_returns:
            started = timezone.now()
            result.returns_error = _listing_run(
                lambda: returns_list(client, seller_id, state.returns_watermark, result),
                seller_id,
                "returns",
            )
            saved.update(_outcome("returns", result.returns_error))
            if not result.returns_error:
                saved["returns_watermark"] = started
    finally:
        pull_state_save(
            seller_id,
            token,
            claim_token="",
            lease_until=None,
            last_finished_at=timezone.now(),
            last_error=result.error[:2000],
            **saved,
        )
    return result


def _listing_run(run: Callable[[], None], seller_id: int, kind: str) -> str:
    """Run one listing; its failure as text ("" when it went through). Any error: the
    other listing, and the seller's other work, go on."""
    try:
        run()
    except Exception as exc:
        text = f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"
        logger.warning("%s listing of seller %s failed: %s", kind, seller_id, text)
        return text
    return ""


def _outcome(kind: str, error: str) -> dict[str, Any]:
    if error:
        return {f"{kind}_error": error[:2000], f"{kind}_failed_at": timezone.now()}
    return {f"{kind}_error": "", f"{kind}_failed_at": None}


def sellers_returns_pull_fan_out() -> list[int]:
    """Queue a returns pull for each connected seller with something open, at once.

    Not on beat (the pull schedule brings returns along, ``pull_hooks.py``): a one-off
    catch-up for operators, the soak and tests."""
    from functools import partial

    from marketplace.returns.selectors import sellers_with_open_returns_or_refunds
    from marketplace.returns.tasks import seller_returns_pull_task

    seller_ids = list(
        sellers_with_open_returns_or_refunds()
        .filter(connection__state=PlatformConnection.State.CONNECTED)
        .values_list("pk", flat=True)
    )
    for seller_id in seller_ids:
        transaction.on_commit(partial(seller_returns_pull_task.delay, seller_id))
    return seller_ids
