"""What one pass carries from object to object: the run, the platform's side, what the
next pull is forced to read, and the findings recorded so far.

A finding left to staff is recorded once while it is open: a daily pass that finds the
same difference again does not add a second row (staff settle the first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from marketplace.reconcile.findings import finding_record
from marketplace.reconcile.models import Finding, FindingAction, FindingStatus, ReconcileRun
from marketplace.reconcile.platform_reads import PlatformSide


@dataclass
class PassState:
    run: ReconcileRun
    side: PlatformSide
    # What the next pull of the seller must read (``repairs.pull_force``): orders fetched
    # on their own (``SellerSync.retry_numbers``), returns read by their own GET.
    reread_orders: set[str] = field(default_factory=set)
    reread_returns: dict[str, str] = field(default_factory=dict)
    pull_due_now: bool = False
    compared: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    object_errors: list[str] = field(default_factory=list)

    def count(self, what: str) -> None:
        self.compared[what] = self.compared.get(what, 0) + 1

    def record(
        self,
        *,
        kind: str,
        object_type: str,
        object_key: str,
        ours: dict[str, Any],
        theirs: dict[str, Any],
        action: str,
        note: str = "",
    ) -> Finding | None:
        """Record one finding (None: the same one is open already, left to staff)."""
        if (
            action == FindingAction.STAFF
            and Finding.objects.filter(
                seller_id=self.run.seller_id,
                kind=kind,
                object_key=object_key[:300],
                status=FindingStatus.OPEN,
            ).exists()
        ):
            return None
        finding = finding_record(
            self.run,
            kind=kind,
            object_type=object_type,
            object_key=object_key,
            ours=ours,
            theirs=theirs,
            action=action,
            note=note,
        )
        self.findings.append(finding)
        return finding
