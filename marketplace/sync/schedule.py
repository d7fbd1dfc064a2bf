"""Each seller's pull schedule: when the next pull is due and why (``SellerSync``).

Cost follows activity (DESIGN.md, principle 6):

* a pull that finds open work (``open_work_reasons``: unsettled orders, undecided
  returns, a change it just read …) schedules the next one ``PULL_INTERVAL_SECONDS``
  later;
* a pull that finds nothing open doubles the wait, step by step, up to
  ``PULL_IDLE_CEILING_SECONDS``;
* a seller backed off who has new open work (an order or a return placed for them) is
  brought back to the short interval by the next beat tick (``sync_wake_open_work``,
  reading only what was placed lately);
* a failing pull is retried later and later, up to ``PULL_FAILURE_CEILING_SECONDS``;
* the fan-out claims due rows in bounded batches through ``next_pull_at``'s index, one
  statement per batch, moving each to a lease (``PULL_LEASE_SECONDS``) so two beats never
  queue the same pull twice and a lost message is sent again when the lease runs out.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from marketplace.orders.models import Order
from marketplace.orders.selectors import OPEN_ORDER_STATES, seller_open_orders_reason
from marketplace.outbox import lease
from marketplace.returns.selectors import open_returns, seller_open_returns_reason
from marketplace.sync.models import SellerSync

# Reasons staff read on the dashboard.
REASON_CONNECTED = "connected"
REASON_PULL_NOW = "pull now"
REASON_NOT_CONNECTED = "not connected"
REASON_OPEN_WORK = "new open work (an order or a return)"
# New work is looked for this many beat periods back: a tick or two missed still wakes.
WAKE_LOOKBACK_PERIODS = 4


def open_work_reasons(*, seller_id: int) -> list[str]:
    """Why ``seller_id`` should be pulled at the short interval (empty: nothing is open):
    their unsettled orders (the orders pull), their undecided returns (the after-sale
    pull). One query on a partial index each."""
    reasons = [seller_open_orders_reason(seller_id), seller_open_returns_reason(seller_id)]
    return [reason for reason in reasons if reason]


def _interval() -> timedelta:
    return timedelta(seconds=settings.PULL_INTERVAL_SECONDS)


def _jitter(seconds: float) -> timedelta:
    # ±10 %: sellers that went idle together (a deploy, a migration) spread out again.
    return timedelta(seconds=seconds * random.uniform(0.9, 1.1))


def idle_wait(steps: int) -> float:
    """Seconds until the next pull after ``steps`` idle pulls in a row (no jitter)."""
    return min(
        settings.PULL_IDLE_CEILING_SECONDS,
        settings.PULL_INTERVAL_SECONDS * 2.0 ** min(steps, 30),
    )


def failure_wait(failures: int) -> float:
    return min(
        settings.PULL_FAILURE_CEILING_SECONDS,
        settings.PULL_INTERVAL_SECONDS * 2.0 ** min(max(failures - 1, 0), 30),
    )


# --- writes ---------------------------------------------------------------------------


def schedule_start(*, seller_id: int, reason: str = REASON_CONNECTED) -> None:
    """A (re)connected seller: their pull is due now (the row is made if missing)."""
    SellerSync.objects.update_or_create(
        seller_id=seller_id,
        defaults={
            "next_pull_at": timezone.now(),
            "reason": reason,
            "idle_steps": 0,
            "consecutive_failures": 0,
            "started_at": timezone.now(),
        },
    )


def schedule_after_pull(
    *,
    sync: SellerSync,
    failed: bool = False,
    connected: bool = True,
    reasons: list[str] | None = None,
    started_at: datetime | None = None,
    now: datetime,
) -> None:
    """Set ``sync``'s next pull from what the pull that just ended found (the caller holds
    the row locked and saves it).

    ``reasons``: open work found (``open_work_reasons`` plus what the pull itself saw);
    empty means idle. The wait counts from when the pull was queued (a beat tick, so the
    next one falls on a tick too), else from its start: not from its end, so a seller with
    open work is pulled every interval, not every interval plus the queueing and the pull.
    ``consecutive_failures`` is the caller's (it already counts this pull).
    """
    queued = sync.queued_at if sync.is_queued else None
    base = min(queued or started_at or now, now)
    if not connected:
        sync.next_pull_at = None
        sync.reason = REASON_NOT_CONNECTED
    elif failed:
        wait = failure_wait(sync.consecutive_failures)
        sync.next_pull_at = max(now, base + timedelta(seconds=wait))
        sync.reason = f"failing — retry {sync.consecutive_failures}"
    elif reasons:
        sync.idle_steps = 0
        sync.next_pull_at = max(now, base + _interval())
        sync.reason = ", ".join(reasons)[:200]
    else:
        sync.idle_steps += 1
        wait = idle_wait(sync.idle_steps)
        sync.next_pull_at = max(now, base + _jitter(wait))
        at_ceiling = wait >= settings.PULL_IDLE_CEILING_SECONDS
        sync.reason = (
            f"idle — backing off (step {sync.idle_steps}{', at the ceiling' if at_ceiling else ''})"
        )


def schedule_pull_now(*, seller_id: int, now: datetime | None = None) -> None:
    """Pull now (staff, the seller): the pull is queued at once; the row holds the lease so
    the next beat does not queue it again."""
    now = now or timezone.now()
    lease = now + timedelta(seconds=settings.PULL_LEASE_SECONDS)
    SellerSync.objects.update_or_create(
        seller_id=seller_id,
        # The connection is live (the caller checked): the schedule is started too.
        defaults={
            "next_pull_at": lease,
            "reason": REASON_PULL_NOW,
            "queued_at": now,
            "started_at": now,
        },
    )


# --- the fan-out's tick -----------------------------------------------------------------


def schedule_claim_due(
    *,
    limit: int,
    now: datetime | None = None,
    ahead_seconds: float = 0.0,
    lease_seconds: float | None = None,
) -> list[int]:
    """Claim up to ``limit`` sellers due by ``now + ahead_seconds``, oldest due first, in
    one statement: their next pull moves to a lease (rows another beat holds are skipped).
    Returns their ids.

    The one lease's due-rows take (``lease.take_due``), with the due time as the lease:
    the pull's message is out, and if it is lost the seller is due again when the lease
    ends (the pull itself takes the row's claim, ``pull_lease.py``). It walks the partial
    index ``sellersync_due`` from its oldest entry and stops at the LIMIT: it reads the due
    rows, never the population. The fan-out looks half a beat period ahead: a pull due
    just after this tick goes now, a little early, instead of a whole period late at the
    next one.
    """
    now = now or timezone.now()
    seconds = settings.PULL_LEASE_SECONDS if lease_seconds is None else lease_seconds
    return lease.take_due(
        SellerSync,
        due_field="next_pull_at",
        due_by=now + timedelta(seconds=ahead_seconds),
        until=now + timedelta(seconds=seconds),
        now=now,
        limit=limit,
        returning="seller_id",
        also={"queued_at": now, "updated_at": now},
    )


def sync_wake_open_work(*, now: datetime | None = None, chunk: int = 5000) -> int:
    """Sellers with new open work, an open order or an open return placed lately, whose
    pull is backed off (later than one interval from now): pull them within the interval.
    Returns how many moved.

    This is how new work reaches the schedule: the order and return intake sit below this
    app and do not write its table. It reads only what was placed within
    ``WAKE_LOOKBACK_PERIODS`` beat periods (a partial index on open orders' ``created_at``;
    open returns are few), then looks up just those sellers' rows: the cost follows new
    work, never the population. Seen again by the next ticks, a seller already within the
    interval is not written. A seller whose pull is queued (the lease) or failing (its
    backoff) is left alone, and so is one not scheduled (not connected).
    """
    now = now or timezone.now()
    since = now - timedelta(seconds=settings.PULL_FAN_OUT_EVERY_SECONDS * WAKE_LOOKBACK_PERIODS)
    soon = now + _interval()
    new_work = set(
        Order.objects.filter(state__in=OPEN_ORDER_STATES, created_at__gte=since).values_list(
            "seller_id", flat=True
        )
    )
    new_work.update(
        open_returns().filter(created_at__gte=since).values_list("seller_id", flat=True)
    )
    if not new_work:
        return 0
    backed_off = SellerSync.objects.filter(next_pull_at__gt=soon, consecutive_failures=0).filter(
        Q(queued_at__isnull=True) | Q(queued_at__lte=F("last_finished_at"))
    )
    ids, moved = sorted(new_work), 0
    for start in range(0, len(ids), chunk):
        moved += backed_off.filter(seller_id__in=ids[start : start + chunk]).update(
            next_pull_at=soon, reason=REASON_OPEN_WORK, idle_steps=0, updated_at=now
        )
    return moved
