"""One pull of a seller at a time: the one lease (``marketplace.outbox.lease``) on the
seller's ``SellerSync`` row, taken with a conditional UPDATE (no lock held during HTTP),
extended by each step the pull keeps, and given back when the pull's outcome is recorded
(``pull.py``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError
from django.utils import timezone

from marketplace.orders.services.pull import PullPosition
from marketplace.outbox import lease
from marketplace.sync.models import SellerSync


def _lease_end(now: datetime) -> datetime:
    return now + timedelta(seconds=settings.PULL_LEASE_SECONDS)


def lease_claim(*, seller_id: int) -> tuple[str, SellerSync] | None:
    """The seller's row with a fresh lease (made if missing), or None while another pull
    of the seller holds it. Returns the lease's token with the row as claimed."""
    now = timezone.now()
    try:
        # A first pull of a live connection starts the schedule (its end sets the next).
        sync, _ = SellerSync.objects.get_or_create(
            seller_id=seller_id, defaults={"started_at": now}
        )
    except IntegrityError:  # created concurrently
        sync = SellerSync.objects.get(seller_id=seller_id)
    token = lease.token_new()
    rows = SellerSync.objects.filter(pk=sync.pk)
    if not lease.take(
        rows, token=token, until=_lease_end(now), now=now, last_started_at=now, updated_at=now
    ):
        return None
    sync.refresh_from_db()
    return token, sync


def lease_extend(*, seller_id: int, token: str) -> bool:
    """Renew the lease (a long pull goes on to its next part); False once it is lost."""
    now = timezone.now()
    rows = SellerSync.objects.filter(seller_id=seller_id)
    return lease.extend(rows, token=token, until=_lease_end(now), updated_at=now)


def position_of(sync: SellerSync) -> PullPosition:
    """Where the seller's orders listing stands, as the orders pull reads it."""
    return PullPosition(
        cursor=sync.cursor,
        resume_cursor=sync.resume_cursor,
        resume_since=sync.resume_since,
        resume_started_at=sync.resume_started_at,
        retry_numbers=[str(n) for n in sync.retry_numbers or []],
    )


def position_keep(position: PullPosition, *, seller_id: int, token: str) -> bool:
    """Save the orders listing's progress and extend the lease, only while we hold it."""
    now = timezone.now()
    return lease.extend(
        SellerSync.objects.filter(seller_id=seller_id),
        token=token,
        until=_lease_end(now),
        cursor=position.cursor,
        resume_cursor=position.resume_cursor,
        resume_since=position.resume_since,
        resume_started_at=position.resume_started_at,
        retry_numbers=position.retry_numbers,
        updated_at=now,
    )
