"""Staff's actions on reconciliation: run a seller's pass now, settle a finding."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils import timezone

from marketplace.enqueue import task_enqueue
from marketplace.reconcile.models import Finding, FindingStatus, ReconcileRun, RunTrigger
from marketplace.reconcile.schedule import SELLER_RECONCILE_TASK
from sellers.models import PlatformConnection, Seller


@dataclass(frozen=True)
class Done:
    ok: bool
    message: str


def reconcile_now(*, seller: Seller, actor: str) -> Done:
    """Queue a pass of ``seller`` now (a worker runs it: it calls the platform)."""
    connection = PlatformConnection.objects.filter(seller=seller).first()
    if connection is None or not connection.is_live:
        return Done(False, "Not reconciled: the platform connection is not live.")
    asked = timezone.now()
    task_enqueue(SELLER_RECONCILE_TASK, seller.pk, RunTrigger.STAFF, actor)
    run = (
        ReconcileRun.objects.filter(seller=seller, trigger=RunTrigger.STAFF, started_at__gte=asked)
        .order_by("-id")
        .first()
    )
    if run is not None and run.finished_at is not None:
        # Eager tasks (tests) or a fast worker: the pass has run already.
        if run.error:
            return Done(False, f"Reconciliation stopped: {run.error}")
        return Done(True, f"Reconciled: {run.findings_count} finding(s).")
    return Done(True, "Reconciliation queued; its findings appear on the Reconciliation page.")


def finding_settle(*, finding_id: int, actor: str, note: str) -> bool:
    """Staff settle an open finding with a note (who and when recorded). False when it
    is not open (settled already, or repaired by the app)."""
    return bool(
        Finding.objects.filter(pk=finding_id, status=FindingStatus.OPEN).update(
            status=FindingStatus.SETTLED,
            settled_by=actor[:150],
            settled_at=timezone.now(),
            staff_note=note,
        )
    )
