"""The scheduled import: orders placed through the marketplace-facing interface become v2
orders, per seller, every ``import_interval_seconds`` (default 60 s; PENDING ones only with
the seller's option on; ones already SHIPPED or CANCELLED are left out). Each import
records a new-order event. Later marketplace state changes reach v2 orders at once
(``marketplace_state_changed``, called by the PUT).
"""

import logging
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction

from sandbox.common import clock
from sandbox.common.loop import loop_start
from sandbox.orders_v2.models import Event, SellerSettings, V2Order
from sandbox.orders_v2.status import service_status_refresh
from sandbox.records.orders.models import Order, Seller

log = logging.getLogger(__name__)
IMPORT_BATCH = 500  # per seller and run: a big backlog is taken over a few runs
_LINE_ID_BASE = 1000  # line id = order id * 1000 + position (digit strings, unique)


def seller_settings(seller: Seller) -> SellerSettings:
    # The schedule starts when the settings do: the first import is one interval later.
    settings, _ = SellerSettings.objects.get_or_create(
        seller=seller, defaults={"last_import_at": clock.now()}
    )
    return settings


def event_add(order: V2Order, kind: str, detail: str = "", at: datetime | None = None) -> None:
    Event.objects.create(order=order, kind=kind, at=at or clock.now(), detail=detail[:500])


def _last_state_change(order: Order) -> datetime:
    latest = order.history.order_by("-id").values_list("at", flat=True).first()
    return latest or order.imported_at


def order_import(order: Order, *, why: str = "scheduled import") -> V2Order:
    """The order's v2 record, created (with its new-order event) if it has none yet."""
    existing = V2Order.objects.filter(order=order).first()
    if existing is not None:
        return existing
    now = clock.now()
    try:
        with transaction.atomic():
            v2 = V2Order.objects.create(
                order=order,
                seller_id=order.seller_id,
                imported_at=now,
                normalized_marketplace_state=order.marketplace_state,
                marketplace_state_changed_at=_last_state_change(order),
            )
            v2.lines = [
                {
                    "id": str(v2.id * _LINE_ID_BASE + position + 1),
                    "mp_line_number": str(line.get("mp_line_number")),
                    "quantity": int(line.get("quantity") or 0),
                }
                for position, line in enumerate(order.placed.get("order_lines", []))
            ]
            v2.save(update_fields=["lines"])
            event_add(
                v2, "new_order", f"{why}: {order.mp_order_number} ({order.marketplace_state})", now
            )
            service_status_refresh(v2)
    except IntegrityError:
        # The import thread and a control call imported it at the same time.
        return V2Order.objects.get(order=order)
    return v2


def seller_import(seller: Seller, *, everything: bool = False) -> int:
    """Import the seller's due orders (``IMPORT_BATCH`` a run, or all with ``everything``)."""
    settings = seller_settings(seller)
    # Orders already SHIPPED or CANCELLED when the import first sees them leave the seller
    # nothing to do: not imported (our choice; a control-API action still imports one).
    states = ["AWAITING_SHIPMENT"]
    if settings.import_pending:
        states.append("PENDING")
    due = list(
        Order.objects.filter(seller=seller, v2__isnull=True, marketplace_state__in=states).order_by(
            "id"
        )[:IMPORT_BATCH]
    )
    for order in due:
        order_import(order)
    imported = len(due)
    SellerSettings.objects.filter(id=settings.id).update(last_import_at=clock.now())
    if everything and imported == IMPORT_BATCH:
        imported += seller_import(seller, everything=True)
    return imported


def imports_due() -> int:
    """Run the import of every seller whose schedule is due; the number of orders imported."""
    now = clock.now()
    imported = 0
    for seller in Seller.objects.all():
        settings = seller_settings(seller)
        interval = timedelta(seconds=settings.import_interval_seconds)
        if settings.last_import_at is None or settings.last_import_at + interval <= now:
            imported += seller_import(seller)
    return imported


def marketplace_state_changed(order: Order, state: str, at: datetime) -> None:
    """A PUT changed the marketplace state: the v2 order (if imported) follows at once."""
    v2 = V2Order.objects.filter(order=order).first()
    if v2 is None or v2.normalized_marketplace_state == state:
        return
    previous = v2.normalized_marketplace_state
    v2.normalized_marketplace_state = state
    v2.marketplace_state_changed_at = at
    v2.save(update_fields=["normalized_marketplace_state", "marketplace_state_changed_at"])
    event_add(v2, "marketplace_state_changed", f"{previous} → {state}", at)
    service_status_refresh(v2)


def import_thread_start() -> None:
    """Start the schedule once per server process (sellers' intervals decide what runs)."""
    loop_start("sandbox-v2-import", imports_due, pause_seconds=0.25)
