"""After a database restore: bring one seller level with the platform, pay nothing twice.

The platform kept everything since our backup; we lost it. Run with workers and beat
stopped (README "Backups and restore"), per seller, by
``manage.py reconcile --all --after-restore [--since ISO]``:

1. **Orders.** The platform's orders imported on or after ``since`` (the backup's time
   less a margin: the latest order we hold, less ``RESTORE_MARGIN``, or ``--since``;
   ``GET /orders?imported_after=…``, paged), and the orders we hold open (by
   ``mp_order_numbers``, 50 a page). An order we lack is rebuilt from the platform's
   record (``orders/services/adopt.py``, its push marked already sent); one we hold
   behind the platform takes its state and fulfillments through the pull's store.
2. **Returns.** The platform's returns updated since (``GET /returns?updated_after=…``):
   one we lack is rebuilt from its record (``returns/services/return_adopt.py``); one the
   platform shows ``COMPLETED`` that we lack or hold open is recorded in the ledger once,
   from the platform's amounts (``decide.return_decide(after_restore=True)``); the others
   go through the normal record path (``return_progress.py``).
3. **Refunds.** The platform's ``COMPLETE`` refunds created since, and those of orders
   whose refunds we hold open: recorded once from the platform's record
   (``refund_versions.refund_version_store`` then ``refund_decide(after_restore=True)``).

Money is never paid here and never written twice: a refund or return whose ledger keys
(``returns/payment_keys.py``) are already there is compared, not recorded; what cannot be
settled (amounts that disagree, a ledger entry the platform does not show complete, a
record we cannot read) is a ``Finding`` left to staff. Every rebuild is a ``Finding``
too (``RECORDED``), so staff see what the restore brought back.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.utils import timezone

from marketplace.platform.errors import PlatformError
from marketplace.platform.order_source import OrderSourceClient
from marketplace.reconcile.models import ReconcileRun
from marketplace.reconcile.restore_money import MoneyStep
from marketplace.reconcile.restore_orders import OrdersStep
from marketplace.reconcile.restore_pass import RestoreResult, restore_since
from sellers.errors import SellerConnectionError
from sellers.models import PlatformConnection, Seller
from sellers.token_source import order_client_for_seller

logger = logging.getLogger(__name__)


class _AfterRestorePass(OrdersStep, MoneyStep):
    """Orders first (a return or refund needs its order), then returns, then refunds."""


def reconcile_after_restore(
    *, run: ReconcileRun, client: OrderSourceClient, since: datetime | None = None
) -> RestoreResult:
    """One seller's after-restore pass (see the module's docstring); findings on ``run``."""
    one = _AfterRestorePass(run, client, since or restore_since(seller_id=run.seller_id))
    one.orders()
    one.returns()
    one.refunds()
    return one.result


def seller_reconcile_after_restore(
    *, seller_id: int, since: datetime | None = None, trigger: str, actor: str = ""
) -> ReconcileRun:
    """Run the after-restore pass of one seller as a recorded ``ReconcileRun``; a pass
    that cannot finish (no live connection, the platform refused) keeps its error and
    the findings made before it stopped."""
    run = ReconcileRun.objects.create(
        seller_id=seller_id, trigger=trigger, actor=actor[:150], after_restore=True
    )
    result: RestoreResult | None = None
    try:
        seller = Seller.objects.get(pk=seller_id)
        result = reconcile_after_restore(
            run=run, client=order_client_for_seller(seller), since=since
        )
    except (PlatformError, SellerConnectionError) as exc:
        logger.warning("after-restore pass of seller %s stopped: %s", seller_id, exc)
        run.error = f"{type(exc).__name__}: {exc}"[:2000]
    run.finished_at = timezone.now()
    run.findings_count = run.findings.count()
    if result is not None:
        run.platform_calls = result.calls
        run.compared = result.compared
    run.save()
    return run


def sellers_to_reconcile_after_restore() -> list[int]:
    """Every seller that ever connected (a seller never connected has nothing there)."""
    return sorted(PlatformConnection.objects.values_list("seller_id", flat=True).distinct())
