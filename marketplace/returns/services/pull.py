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
the seller's ``sync.SellerSync`` row (staff see it) and retried at the next pull. One
record never stops its page: each is stored and decided in its own savepoint
(``record_problems.py``).

``marketplace.sync`` calls ``after_sale_pull`` after each good orders pull of the seller
(one pull of a seller at a time: its lease), and saves what the result says.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from django.utils import timezone

from marketplace.platform.order_source import OrderSourceClient
from marketplace.returns.selectors import seller_has_open_returns, seller_may_get_refunds
from marketplace.returns.services.pull_state import ReturnsPullResult
from marketplace.returns.services.refund_listing import refunds_list
from marketplace.returns.services.return_listing import returns_list

logger = logging.getLogger(__name__)

__all__ = ["ReturnsPullResult", "after_sale_pull"]


def after_sale_pull(
    *, seller_id: int, client: OrderSourceClient, returns_watermark: datetime | None
) -> ReturnsPullResult:
    """Read this seller's open refunds and returns changed since ``returns_watermark``,
    and decide them. Nothing is asked when nothing can be found."""
    result = ReturnsPullResult(seller_id=seller_id)
    want_returns = seller_has_open_returns(seller_id=seller_id)
    want_refunds = seller_may_get_refunds(seller_id=seller_id)
    if not (want_returns or want_refunds):
        return result
    result.ran = True
    if want_refunds:
        result.refunds_listed_now = True
        result.refunds_error = _listing_run(
            lambda: refunds_list(client, seller_id, result), seller_id, "refunds"
        )
    if want_returns:
        result.returns_listed_now = True
        started = timezone.now()
        result.returns_error = _listing_run(
            lambda: returns_list(client, seller_id, returns_watermark, result),
            seller_id,
            "returns",
        )
        if not result.returns_error:
            result.returns_watermark = started
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
