"""What the steps of an after-restore pass share (``after_restore.py``): the run, the
seller's client, the counts, the listing of pages and the writing of findings."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import Max

from marketplace.orders.models import Order
from marketplace.platform.order_source import OrderSourceClient
from marketplace.reconcile.findings import finding_record
from marketplace.reconcile.models import FindingAction, ReconcileRun

# How far before the latest order we hold the platform is asked for what we lost: pushes
# in flight when the backup was taken, clocks apart.
RESTORE_MARGIN = timedelta(hours=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PAGE_SIZE = 50


@dataclass
class RestoreResult:
    since: datetime
    orders_rebuilt: int = 0
    orders_caught_up: int = 0
    returns_rebuilt: int = 0
    recorded: int = 0
    left_to_staff: int = 0
    calls: int = 0
    compared: dict[str, int] = field(default_factory=dict)


def restore_since(*, seller_id: int) -> datetime:
    """The latest order we hold for the seller, less ``RESTORE_MARGIN`` (the backup's
    time, near enough); every order ever when we hold none."""
    latest = Order.objects.filter(seller_id=seller_id).aggregate(at=Max("created_at"))["at"]
    return latest - RESTORE_MARGIN if latest else EPOCH


def chunks(values: list[str], size: int = PAGE_SIZE) -> Iterator[list[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


class RestorePass:
    """One seller's after-restore pass: what its steps share (the run, the client, the
    counts, how findings are written)."""

    def __init__(self, run: ReconcileRun, client: OrderSourceClient, since: datetime) -> None:
        self.run = run
        self.client = client
        self.seller_id = run.seller_id
        self.result = RestoreResult(since=since)

    def pages(self, pages: Iterable[dict[str, Any]], key: str) -> Iterator[dict[str, Any]]:
        for page in pages:
            self.result.calls += 1
            yield from (e for e in page.get(key) or [] if isinstance(e, dict))

    def found(
        self,
        kind: str,
        object_type: str,
        key: str,
        *,
        ours: dict[str, Any],
        theirs: dict[str, Any],
        action: str,
        note: str = "",
    ) -> None:
        finding_record(
            self.run,
            kind=kind,
            object_type=object_type,
            object_key=key,
            ours=ours,
            theirs=theirs,
            action=action,
            note=note,
        )
        if action == FindingAction.STAFF:
            self.result.left_to_staff += 1
        elif action == FindingAction.RECORDED:
            self.result.recorded += 1
