"""A pull of one seller queued now (staff's and the seller's Pull now), and the seller's
own Pull now's rate-limit clock.

It runs on a worker: a big seller's pull takes longer than a web request should.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from marketplace.enqueue import task_enqueue
from marketplace.sync.models import SellerSync
from marketplace.sync.schedule import schedule_pull_now
from sellers.models import PlatformConnection, Seller

SELLER_PULL_TASK = "marketplace.sync.tasks.seller_pull_task"


@dataclass(frozen=True)
class PullQueued:
    ok: bool
    result: str  # what to tell the person who asked, in plain words


def seller_pull_queue(*, seller: Seller) -> PullQueued:
    """Queue a pull of ``seller`` on commit, if their connection is live."""
    connection = PlatformConnection.objects.filter(seller=seller).first()
    if connection is None or not connection.is_live:
        return PullQueued(False, "Not pulled: the platform connection is not live.")
    requested = timezone.now()
    # The schedule holds the lease (the next beat does not queue it again) and says why.
    schedule_pull_now(seller_id=seller.id, now=requested)
    task_enqueue(SELLER_PULL_TASK, seller.id)
    sync = SellerSync.objects.filter(seller=seller).first()
    if sync is not None and sync.last_finished_at and sync.last_finished_at >= requested:
        # Eager tasks (tests) or a fast worker: the pull has run already.
        if sync.last_error:
            return PullQueued(False, f"The pull stopped: {sync.last_error}")
        return PullQueued(True, "Pulled.")
    return PullQueued(True, "Pull queued; the pull status updates when it finishes.")


def pull_now_last_requested(*, seller_id: int) -> datetime | None:
    """When the seller last pressed Pull now (their rate limit's clock)."""
    return (
        SellerSync.objects.filter(seller_id=seller_id)
        .values_list("pull_now_requested_at", flat=True)
        .first()
    )


def pull_now_requested(*, seller_id: int, at: datetime) -> None:
    SellerSync.objects.update_or_create(seller_id=seller_id, defaults={"pull_now_requested_at": at})
