"""A seller's pull, start to end: what runs, in order, and what is kept.

1. The connection must be live, else the seller leaves the schedule until a reconnect.
2. One pull of a seller at a time: the lease on their ``SellerSync`` row (``pull_lease.py``).
3. The orders pull (``orders.services.pull.orders_pull``) from where the listing stands;
   it keeps each step's progress on the row while the lease holds.
4. If it went through, the after-sale pull (``returns.services.pull.after_sale_pull``):
   the seller's open refunds and changed returns, with the same client, when something
   could be found. It runs here, after every good orders pull, so it follows the same
   schedule and needs no fan-out over every seller of its own.
5. One transaction records how both ended, schedules the next pull from the open work
   found (``schedule.py``) and gives the lease back.

``seller_after_sale_pull`` runs step 4 alone (an operator's catch-up, the soak, tests).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from marketplace.orders.services.pull import PullResult, orders_pull
from marketplace.outbox import lease
from marketplace.returns.services.pull import ReturnsPullResult, after_sale_pull
from marketplace.sync.models import SellerSync
from marketplace.sync.pull_lease import lease_claim, lease_extend, position_keep, position_of
from marketplace.sync.schedule import REASON_NOT_CONNECTED, open_work_reasons, schedule_after_pull
from sellers.models import PlatformConnection
from sellers.token_source import order_client_for

logger = logging.getLogger(__name__)


@dataclass
class SellerPull:
    """What one pull of a seller did: the orders pull, then the after-sale pull (None when
    it did not run: the orders pull failed or did not run)."""

    seller_id: int
    orders: PullResult
    after_sale: ReturnsPullResult | None = None

    @property
    def ran(self) -> bool:
        return self.orders.ran

    @property
    def error(self) -> str:
        return self.orders.error


def _live_connection(seller_id: int) -> PlatformConnection | None:
    connection = PlatformConnection.objects.filter(seller_id=seller_id).first()
    return connection if connection is not None and connection.is_live else None


def seller_pull(*, seller_id: int) -> SellerPull:
    """Pull one seller's orders and after-sale work (skipped while a pull of them runs)."""
    pull = SellerPull(seller_id=seller_id, orders=PullResult(seller_id=seller_id))
    started = timezone.now()
    connection = _live_connection(seller_id)
    if connection is None:
        pull.orders.error = "not connected"
        # Off the schedule until a reconnect (``connect.py`` makes it due again).
        SellerSync.objects.filter(seller_id=seller_id).update(
            next_pull_at=None, reason=REASON_NOT_CONNECTED, last_finished_at=started
        )
        return pull
    claimed = lease_claim(seller_id=seller_id)
    if claimed is None:
        return pull  # another pull of this seller runs; it schedules the next one
    token, sync = claimed
    try:
        client = order_client_for(connection, hold_wait=settings.PULL_HOLD_MAX_WAIT)
        pull.orders = orders_pull(
            seller_id=seller_id,
            client=client,
            position=position_of(sync),
            keep=lambda position: position_keep(position, seller_id=seller_id, token=token),
        )
        if not pull.orders.error and lease_extend(seller_id=seller_id, token=token):
            pull.after_sale = after_sale_pull(
                seller_id=seller_id, client=client, returns_watermark=sync.returns_watermark
            )
    except Exception as exc:
        pull.orders.error = pull.orders.error or f"{type(exc).__name__}: {exc}"
        raise
    finally:
        _pull_record(pull, token=token, started=started)
    return pull


def _reasons(pull: SellerPull) -> list[str]:
    """Why the seller's next pull should come soon: their open work, and what this pull
    itself saw."""
    reasons = open_work_reasons(seller_id=pull.seller_id)
    if pull.orders.changed:
        reasons.append("recent change")
    if pull.orders.failed_orders:
        reasons.append("orders to read again")
    return reasons


def _pull_record(pull: SellerPull, *, token: str, started: datetime) -> None:
    """How the pull ended, the next pull, the lease given back: one row lock, one UPDATE."""
    reasons = [] if pull.orders.error else _reasons(pull)
    now = timezone.now()
    with transaction.atomic():
        sync = SellerSync.objects.select_for_update().filter(seller_id=pull.seller_id).first()
        if sync is None:
            return  # the seller was deleted meanwhile
        if lease.held_by(sync, token):
            _orders_outcome(sync, pull.orders, now)
            if pull.after_sale is not None:
                _after_sale_outcome(sync, pull.after_sale, now)
            lease.clear(sync)
        else:
            logger.warning("pull of seller %s lost its lease; outcome not kept", pull.seller_id)
        schedule_after_pull(
            sync=sync, failed=bool(pull.orders.error), reasons=reasons, started_at=started, now=now
        )
        sync.last_finished_at = now
        sync.save()


def _orders_outcome(sync: SellerSync, result: PullResult, now: datetime) -> None:
    sync.last_error = result.error[:2000]
    if result.error:
        sync.consecutive_failures += 1
    else:
        sync.last_success_at = now
        sync.consecutive_failures = 0


def _after_sale_outcome(sync: SellerSync, result: ReturnsPullResult, now: datetime) -> None:
    """Each listing that ran keeps its own outcome (one never stops the other)."""
    if not result.ran:
        return
    if result.refunds_listed_now:
        sync.refunds_error = result.refunds_error[:2000]
        sync.refunds_failed_at = now if result.refunds_error else None
    if result.returns_listed_now:
        sync.returns_error = result.returns_error[:2000]
        sync.returns_failed_at = now if result.returns_error else None
    if result.returns_watermark is not None:
        sync.returns_watermark = result.returns_watermark
    sync.after_sale_finished_at = now


def seller_after_sale_pull(*, seller_id: int) -> ReturnsPullResult:
    """The after-sale pull alone, under the seller's lease (the schedule is not moved)."""
    result = ReturnsPullResult(seller_id=seller_id)
    connection = _live_connection(seller_id)
    if connection is None:
        result.returns_error = result.refunds_error = "not connected"
        return result
    claimed = lease_claim(seller_id=seller_id)
    if claimed is None:
        return result
    token, sync = claimed
    try:
        client = order_client_for(connection, hold_wait=settings.PULL_HOLD_MAX_WAIT)
        result = after_sale_pull(
            seller_id=seller_id, client=client, returns_watermark=sync.returns_watermark
        )
    finally:
        now = timezone.now()
        with lease.holding(SellerSync.objects.filter(seller_id=seller_id), token=token) as held:
            if held is not None:
                _after_sale_outcome(held, result, now)
                lease.clear(held)
                held.save()
    return result
