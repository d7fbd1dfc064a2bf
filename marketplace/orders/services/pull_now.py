"""A pull of one seller's fulfillments, queued now (staff's and the seller's Pull now).

It runs on a worker: a big seller's pull takes longer than a web request should.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from marketplace.orders.models import SellerPullState
from sellers.models import PlatformConnection, Seller
from sellers.pull_schedule import pull_schedule_pull_now


@dataclass(frozen=True)
class PullQueued:
    ok: bool
    result: str  # what to tell the person who asked, in plain words


def seller_pull_queue(*, seller: Seller) -> PullQueued:
    """Queue a pull of ``seller``'s fulfillments on commit, if their connection is live."""
    from marketplace.orders.tasks import seller_pull_task

    connection = PlatformConnection.objects.filter(seller=seller).first()
    if connection is None or not connection.is_live:
        return PullQueued(False, "Not pulled: the platform connection is not live.")
    requested = timezone.now()
    # The schedule holds the lease (the next beat does not queue it again) and says why.
    pull_schedule_pull_now(seller_id=seller.id, now=requested)
    transaction.on_commit(lambda: seller_pull_task.delay(seller.id))
    state = SellerPullState.objects.filter(seller=seller).first()
    if state is not None and state.last_finished_at and state.last_finished_at >= requested:
        # Eager tasks (tests) or a fast worker: the pull has run already.
        if state.last_error:
            return PullQueued(False, f"The pull stopped: {state.last_error}")
        return PullQueued(True, "Pulled.")
    return PullQueued(True, "Pull queued; the pull status updates when it finishes.")
