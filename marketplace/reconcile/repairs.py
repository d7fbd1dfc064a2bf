"""What a pass may do about a difference, and nothing else (never a guess, never money):

* the platform is behind us: the outbox sends again. An order gets a new desired version
  (``order_sync_mark_changed``: the push sends its current state with an idempotent
  ``PUT``); a return's step that went through is made due again (the outbox engine's
  ``due_again``: a ``PUT`` of the same return, a ``complete`` again, both idempotent);
* we are behind the platform: the next pull is forced to read it. An order goes on the
  seller's ``retry_numbers`` (the orders pull fetches it on its own); a return is marked to
  be read by its own ``GET`` (the returns pull's re-read of records to look at again); the
  seller's pull is made due now. Refunds to decide need nothing more: the refunds listing
  lists every ``CREATED`` one.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from marketplace.orders.models import Order
from marketplace.orders.services.outbox import order_sync_mark_changed
from marketplace.outbox import lease
from marketplace.outbox.sweep import due_again
from marketplace.returns.models import PlatformStep, RecordKind, ReturnsRecordProblem
from marketplace.returns.services.steps import RETURN_STEP, steps_wake
from marketplace.sync.models import SellerSync

ACTOR = "reconcile"
# The re-read mark's text (staff may see it on the returns page until the pull reads it).
REREAD_NOTE = "reconciliation: the platform shows this return further on; read again"
# Why the seller's next pull is due now (staff read it on the seller's page).
REASON_RECONCILE = "reconciliation: read what the platform shows"


def order_send_again(*, order: Order, note: str) -> None:
    """A new version of the order for the push (the platform lacks or is behind it)."""
    with transaction.atomic():
        order_sync_mark_changed(order=order, actor=ACTOR, message=note)


def step_send_again(*, step: PlatformStep) -> bool:
    """A return's or refund's call that went through, made due again (its answer is lost
    at the platform, or undone there). False if the row is claimed by a worker now."""
    with transaction.atomic():
        changed = due_again(RETURN_STEP, PlatformStep.objects.filter(pk=step.pk))
        if changed:
            steps_wake()
    return bool(changed)


def return_reread_mark(*, seller_id: int, mp_return_number: str, mp_order_number: str) -> None:
    """The next returns pull reads this return by its own ``GET`` (its listing by update
    time may never list it again: the platform changed it without a new update time)."""
    now = timezone.now()
    values = {
        "first_failed_at": now,
        "last_failed_at": now,
        "mp_order_number": mp_order_number[:128],
        "error": REREAD_NOTE,
    }
    key = mp_return_number[:128]
    try:
        with transaction.atomic():
            problem, created = ReturnsRecordProblem.objects.get_or_create(
                seller_id=seller_id, kind=RecordKind.RETURN, record_key=key, defaults=values
            )
    except IntegrityError:
        problem = ReturnsRecordProblem.objects.get(
            seller_id=seller_id, kind=RecordKind.RETURN, record_key=key
        )
        created = False
    if not created and (problem.resolved_at is not None or problem.dead_at is not None):
        # Read again, not counted as a failure: the pull resolves it once read.
        ReturnsRecordProblem.objects.filter(pk=problem.pk).update(
            resolved_at=None, dead_at=None, failures=0, error=REREAD_NOTE, last_failed_at=now
        )


def lease_give_back(
    *, seller_id: int, token: str, reread_orders: set[str], pull_due_now: bool
) -> None:
    """Give the seller's pull lease back; orders to read go on ``retry_numbers`` and, when
    anything is to be read, the next pull is due now (one row lock, one save)."""
    now = timezone.now()
    with lease.holding(SellerSync.objects.filter(seller_id=seller_id), token=token) as sync:
        if sync is None:
            return  # the lease ran out and another pull holds it now
        if reread_orders:
            known = [str(n) for n in sync.retry_numbers or []]
            sync.retry_numbers = known + sorted(reread_orders - set(known))
        # The pass found the connection live: the pull is due now, scheduled or not.
        if pull_due_now:
            sync.next_pull_at = now
            sync.reason = REASON_RECONCILE
            sync.idle_steps = 0
        lease.clear(sync)
        sync.save()
