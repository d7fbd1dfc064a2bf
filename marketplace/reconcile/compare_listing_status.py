"""Listing statuses sent through EDRTS, compared with what the seller's platform database
holds, read back by the Content API (``marketplace/platform/content.py``).

What is compared: the SKUs whose status we sent within ``RECONCILE_CLOSED_DAYS`` (at most
``RECONCILE_STATUS_SAMPLE``, newest sent first), only while EDRTS sends the seller's
statuses. A SKU with a change still waiting to be sent is not judged: its send is on its
way (as an order whose push is). Nothing sent → no call. The status field is the one
EDRTS writes (the listing-status import's target, ``edrts_sender.status_targets``); the
product is addressed by the record id we sent (the seller's own id), else the SKU.

The platform holds another value than the one we sent last (a lost batch, a change made
there) → ``listing_status_behind``, sent again: the SKU's current status is recorded as a
new change on the listing-status outbox and the sender woken. A product the database no
longer holds is the seller's business (it left their catalog): not a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from marketplace.catalog.api_access.api_user import platform_api
from marketplace.catalog.listing_status.edrts_sender import (
    status_sync_send_again,
    status_targets,
)
from marketplace.catalog.listing_status.status_outbox import edrts_sends
from marketplace.catalog.models import CatalogSource, StatusChange, StatusSent
from marketplace.reconcile import kinds
from marketplace.reconcile.models import FindingAction
from marketplace.reconcile.pass_state import PassState

NOTE_SENT_AGAIN = "its current status sent again through EDRTS"


@dataclass(frozen=True)
class SentStatus:
    sku: str
    record_id: str  # the product's id at the platform, as sent
    status: str
    version: int


@dataclass
class StatusScope:
    db_id: str = ""
    status_field: str = ""
    sent: list[SentStatus] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.sent


@dataclass
class StatusSide:
    """What the platform holds: product rows by id, and the requests it took."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: int = 0


def listing_status_scope(*, seller_id: int) -> StatusScope:
    """The statuses of ``seller_id`` a pass reads back (empty: nothing to ask)."""
    source = CatalogSource.objects.filter(seller_id=seller_id).first()
    if source is None or not source.db_id or not edrts_sends(source=source):
        return StatusScope()
    since = timezone.now() - timedelta(days=settings.RECONCILE_CLOSED_DAYS)
    waiting = StatusChange.objects.filter(seller_id=seller_id, sent_at__isnull=True).values("sku")
    sent = list(
        StatusSent.objects.filter(seller_id=seller_id, sent_at__gte=since)
        .exclude(sku__in=waiting)
        .order_by("-sent_at", "sku")
        .values_list("sku", "version", "status")[: settings.RECONCILE_STATUS_SAMPLE]
    )
    if not sent:
        return StatusScope()
    # The record id we sent is on the change we sent (its id is the version); pruned
    # changes fall back to the SKU (the record id is the SKU unless the feed trimmed it).
    record_ids = dict(
        StatusChange.objects.filter(pk__in=[version for _, version, _ in sent]).values_list(
            "pk", "record_id"
        )
    )
    return StatusScope(
        db_id=source.db_id,
        status_field=status_targets(source=source)["status"],
        sent=[
            SentStatus(
                sku=sku, record_id=record_ids.get(version) or sku, status=status, version=version
            )
            for sku, version, status in sorted(sent)
        ],
    )


def listing_status_read(
    scope: StatusScope, side: StatusSide, *, seller_id: int, hold_wait: float
) -> None:
    """Fill ``side`` with the products of ``scope`` at the platform, read through the
    marketplace's API user (the calls count even when one fails). Raises
    ``PlatformError``, or ``CatalogError`` when the API user must sign in again."""
    with platform_api(hold_wait=hold_wait, seller_id=seller_id) as api:
        try:
            side.rows = api.content.rows_by_id(
                db_id=scope.db_id, ids=[item.record_id for item in scope.sent]
            )
        finally:
            side.calls = api.content.calls


def listing_status_compare(state: PassState, scope: StatusScope, side: StatusSide) -> None:
    """Each SKU's status there against the one we sent last; the ones behind sent again."""
    behind: list[str] = []
    for item in scope.sent:
        state.count("listing_statuses")
        row = side.rows.get(item.record_id)
        if row is None:
            continue  # the product left the seller's database: theirs to decide
        held = row.get(scope.status_field)
        held_text = "" if held is None else str(held)
        if held_text == item.status:
            continue
        state.record(
            kind=kinds.LISTING_STATUS_BEHIND,
            object_type="listing_status",
            object_key=item.sku,
            ours={"status": item.status, "version": item.version, "id": item.record_id},
            theirs={scope.status_field: held_text},
            action=FindingAction.RESENT,
            note=NOTE_SENT_AGAIN,
        )
        behind.append(item.sku)
    if behind:
        status_sync_send_again(seller_id=state.run.seller_id, skus=behind)
