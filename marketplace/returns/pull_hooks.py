"""How returns and refunds ride on the seller's pull schedule (``sellers.pull_schedule``).

There is no fan-out of their own: a fan-out over "every seller who may get a refund" (an
order shipped in the last ``REFUND_WATCH_DAYS``) would list nearly every seller every
interval, the population cost the schedule exists to avoid. Instead:

* an undecided return is open work, so its seller is pulled at the short interval;
* after each successful pull of a seller, their returns and refunds are listed too when
  something could be there (``seller_has_open_returns_or_refunds``), on the pull queue.

So a seller refund posted for an idle seller is seen at that seller's next scheduled pull
(at most ``PULL_IDLE_CEILING_SECONDS`` later, or at once when an order or return of theirs
is placed or changed, or staff press "Pull now").
"""

from __future__ import annotations

from functools import partial

from django.db import transaction

from marketplace.returns.selectors import (
    seller_has_open_returns,
    seller_has_open_returns_or_refunds,
)

REASON_OPEN_RETURNS = "open returns"


def returns_open_reason(seller_id: int) -> str:
    return REASON_OPEN_RETURNS if seller_has_open_returns(seller_id=seller_id) else ""


def returns_after_pull(seller_id: int) -> None:
    from marketplace.returns.tasks import seller_returns_pull_task

    if seller_has_open_returns_or_refunds(seller_id=seller_id):
        transaction.on_commit(partial(seller_returns_pull_task.delay, seller_id))
