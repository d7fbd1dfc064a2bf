"""One reconciliation pass of one seller, start to end:

1. the connection must be live (else the run records why, no call);
2. what to compare (``scope.py``, and the listing statuses EDRTS sent:
   ``compare_listing_status.py``): nothing open and nothing sent → done, no platform call;
   else (a scheduled, staff or command pass) one ordinary pull first, so what the cursors
   offer is read and a difference left is drift no cursor shows, not a pull that had not
   come yet;
3. the seller's pull lease (``sync.pull_lease``): a pull and a pass never run for one seller at
   once; while a pull holds it the pass is skipped (the schedule tries again later);
4. the platform's side, read first and whole (``platform_reads.py``; the listing statuses
   through the Content API): a refused or failed request, a revoked grant or an API user
   that must sign in ends the pass with the error on the run, nothing repaired;
5. each order, return, refund and listing status compared on its own (``compare_*.py``): one
   that raises is logged and counted, the others go on; each difference is recorded and
   repaired without guessing (``repairs.py``) or left to staff;
6. the lease given back, with what the next pull is forced to read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from django.conf import settings
from django.utils import timezone

from marketplace.catalog.errors import CatalogError
from marketplace.orders.models import Order
from marketplace.platform.errors import PlatformError
from marketplace.reconcile.after_sale_ours import after_sale_ours_read
from marketplace.reconcile.compare_listing_status import (
    StatusSide,
    listing_status_compare,
    listing_status_read,
    listing_status_scope,
)
from marketplace.reconcile.compare_orders import order_compare
from marketplace.reconcile.compare_refunds import refund_compare, refund_missing_there
from marketplace.reconcile.compare_returns import return_compare
from marketplace.reconcile.models import ReconcileRun
from marketplace.reconcile.pass_state import PassState
from marketplace.reconcile.platform_reads import PlatformSide, platform_side_read
from marketplace.reconcile.repairs import lease_give_back
from marketplace.reconcile.scope import Scope, seller_scope
from marketplace.returns.models import Return, SellerRefund
from marketplace.sync.pull import seller_pull
from marketplace.sync.pull_lease import lease_claim, lease_extend
from sellers.errors import SellerConnectionError
from sellers.models import PlatformConnection
from sellers.token_source import order_client_for

logger = logging.getLogger(__name__)

SKIPPED_LEASE_HELD = "skipped: a pull of this seller was running (tried again later)"
NOT_CONNECTED = "not connected: nothing compared"


def seller_reconcile(
    *,
    seller_id: int,
    trigger: str,
    actor: str = "",
    after_restore: bool = False,
    scope: Scope | None = None,
) -> ReconcileRun:
    """Reconcile one seller now; the run says what was compared, found and done.
    ``scope``: what to compare instead of ``seller_scope``'s open work and sample (the
    soak compares every order of its run, open or not)."""
    run = ReconcileRun.objects.create(
        seller_id=seller_id, trigger=trigger, actor=actor[:150], after_restore=after_restore
    )
    try:
        _pass(run, scope)
    except Exception as exc:  # recorded on the run, then raised for the worker's log
        run.error = run.error or f"{type(exc).__name__}: {exc}"
        raise
    finally:
        run.finished_at = timezone.now()
        run.save()
    return run


def _pass(run: ReconcileRun, given: Scope | None = None) -> None:
    connection = PlatformConnection.objects.filter(seller_id=run.seller_id).first()
    if connection is None or not connection.is_live:
        run.error = NOT_CONNECTED
        return
    scope = given if given is not None else seller_scope(seller_id=run.seller_id)
    # After a restore, ``manage.py reconcile --after-restore`` first runs
    # ``after_restore.py``'s pass (its own run: what the platform holds that we lost), then
    # this one over what is open.
    statuses = listing_status_scope(seller_id=run.seller_id)
    if scope.empty and statuses.empty:
        return
    if given is None and settings.RECONCILE_PULL_FIRST and not scope.empty:
        # What the cursors offer is read first (one pull, under its own lease): a
        # difference left after it is one no cursor shows (drift), not a pull that had not
        # come yet. A pull that fails leaves the comparison to say what differs.
        _catch_up(run.seller_id)
        scope = seller_scope(seller_id=run.seller_id)
        if scope.empty and statuses.empty:
            return
    claimed = lease_claim(seller_id=run.seller_id)
    if claimed is None:
        run.error = SKIPPED_LEASE_HELD
        return
    token, _ = claimed
    state: PassState | None = None
    try:
        side = PlatformSide()
        held = StatusSide()
        try:
            if not scope.empty:
                client = order_client_for(connection, hold_wait=settings.PULL_HOLD_MAX_WAIT)
                platform_side_read(
                    client,
                    side,
                    orders=scope.orders,
                    return_orders=scope.return_orders,
                    refund_orders=scope.refund_orders,
                )
            if not statuses.empty:
                listing_status_read(
                    statuses, held, seller_id=run.seller_id, hold_wait=settings.PULL_HOLD_MAX_WAIT
                )
        except (PlatformError, SellerConnectionError, CatalogError) as exc:
            run.error = f"{type(exc).__name__}: {exc}"[:2000]
            logger.warning("reconcile of seller %s stopped: %s", run.seller_id, run.error)
            return
        finally:
            run.platform_calls = side.calls + held.calls
        # The reads took their time: the lease is renewed for the comparisons and repairs
        # (lost meanwhile: a pull runs now, so nothing is repaired behind its back).
        if not lease_extend(seller_id=run.seller_id, token=token):
            run.error = "the pull lease ran out during the reads: nothing repaired"
            return
        state = PassState(run=run, side=side)
        scope_compare(state, scope)
        if not statuses.empty:
            compare = partial(listing_status_compare, state, statuses, held)
            _each(state, "listing statuses of seller", str(run.seller_id), compare)
        # (after a restore: ``after_restore.py``'s step goes here, with ``state``/``client``)
    finally:
        lease_give_back(
            seller_id=run.seller_id,
            token=token,
            reread_orders=state.reread_orders if state else set(),
            pull_due_now=bool(state and state.pull_due_now),
        )
        if state is not None:
            errors = {"errors": len(state.object_errors)} if state.object_errors else {}
            run.compared = {**state.compared, **errors}
            run.findings_count = len(state.findings)


def _catch_up(seller_id: int) -> None:
    try:
        seller_pull(seller_id=seller_id)
    except Exception:
        logger.exception("reconcile: the catch-up pull of seller %s failed", seller_id)


def _each(state: PassState, what: str, key: str, compare: Callable[[], None]) -> None:
    """One object's comparison: an error is logged and counted; the others go on."""
    try:
        compare()
    except Exception:
        logger.exception("reconcile: %s %s could not be compared", what, key)
        state.object_errors.append(f"{what} {key}")


def scope_compare(state: PassState, scope: Scope) -> None:
    """Step 5 for the orders, returns and refunds of ``scope``, the platform's side read.
    Its queries do not grow with the returns and refunds in scope (``after_sale_ours``)."""
    seller_id = state.run.seller_id
    orders = (
        Order.objects.filter(seller_id=seller_id, mp_order_number__in=scope.orders)
        .select_related("sync")
        .prefetch_related("lines")
        .order_by("id")
    )
    for order in orders:
        _each(state, "order", order.mp_order_number, partial(order_compare, state, order))
    returns = list(
        Return.objects.filter(seller_id=seller_id, order__mp_order_number__in=scope.return_orders)
        .select_related("order")
        .order_by("id")
    )
    ours = {
        refund.refund_id: refund
        for refund in SellerRefund.objects.filter(
            seller_id=seller_id, order__mp_order_number__in=scope.refund_orders
        )
        .select_related("order")
        .prefetch_related("lines")
    }
    # Ledger totals and steps of them all, read once (not one query per return or refund).
    money = after_sale_ours_read(
        return_ids=[ret.pk for ret in returns], refund_ids=[refund.pk for refund in ours.values()]
    )
    for ret in returns:
        _each(state, "return", ret.mp_return_number, partial(return_compare, state, money, ret))
    numbers = set(scope.refund_orders)
    for refund_id, entry in sorted(state.side.refunds.items()):
        if str(entry.get("mp_order_number") or "") in numbers:
            held = ours.get(refund_id)
            compare = partial(refund_compare, state, money, refund_id, entry, held)
            _each(state, "refund", refund_id, compare)
    for refund_id, refund in sorted(ours.items()):
        if refund_id not in state.side.refunds:
            missing = partial(refund_missing_there, state, money, refund)
            _each(state, "refund", refund_id, missing)
