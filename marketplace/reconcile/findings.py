"""Recording what a pass found: one ``Finding`` row each, both versions, what was done."""

from __future__ import annotations

from typing import Any

from marketplace.reconcile.models import Finding, FindingAction, FindingStatus, ReconcileRun


def finding_record(
    run: ReconcileRun,
    *,
    kind: str,
    object_type: str,
    object_key: str,
    ours: dict[str, Any],
    theirs: dict[str, Any],
    action: str,
    note: str = "",
) -> Finding:
    """Record one finding of ``run``; left to staff (``FindingAction.STAFF``) it is open."""
    status = FindingStatus.OPEN if action == FindingAction.STAFF else FindingStatus.REPAIRED
    return Finding.objects.create(
        run=run,
        seller_id=run.seller_id,
        kind=kind,
        object_type=object_type,
        object_key=object_key[:300],
        ours=ours,
        theirs=theirs,
        action=action,
        status=status,
        note=note,
    )
