"""Orders rebuilt from the platform's record after a database restore.

The platform keeps every order we pushed; a restore from last night's backup loses the
ones placed since, and leaves the ones that moved since (paid, shipped) behind. Both are
brought level from the platform's own record (``GET /orders``: the order as placed plus
its fulfillments), never guessed:

* ``order_adopt``: an order we lack: the order, its lines, buyer and address as the
  platform holds them, in the state it shows; its outbox row is marked already sent
  (the platform has exactly this), so it is not pushed as new. Its fulfillments then go
  through the pull's own store (``order_fulfillment_pull``: shipments, settling).
* ``order_platform_state_take``: an order we hold behind the platform (``PENDING`` here,
  ``AWAITING_SHIPMENT`` or ``SHIPPED`` there): the platform's state, the outbox row
  marked sent, then the fulfillments through the same pull store.

Called by ``marketplace/reconcile/after_restore.py``; no HTTP here (the caller listed
the records).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils.dateparse import parse_datetime

from marketplace.orders.models import MarketplaceState, Order, OrderLine, OrderSync, SyncEvent
from marketplace.orders.services.fulfillment import PullOutcome, order_fulfillment_pull
from marketplace.orders.services.outbox import sync_event_add
from marketplace.orders.services.pull import listed_fulfillment_body
from marketplace.orders.states import TRANSITIONS
from marketplace.outbox import lease

ADOPT_ACTOR = "after-restore"
CENT = Decimal("0.01")


class RecordUnreadable(ValueError):
    """A platform record we cannot rebuild an order from (left to staff)."""


def state_ahead(ours: str, theirs: str) -> bool:
    """True when ``theirs`` is reachable from ``ours`` by legal transitions (the platform
    moved on since our backup), e.g. PENDING → SHIPPED through AWAITING_SHIPMENT."""
    seen: set[str] = set()
    todo = list(TRANSITIONS.get(ours, frozenset()))
    while todo:
        state = todo.pop()
        if state == theirs:
            return True
        if state not in seen:
            seen.add(state)
            todo += TRANSITIONS.get(state, frozenset())
    return False


def _text(record: dict[str, Any], key: str, limit: int) -> str:
    value = record.get(key)
    return str(value)[:limit] if value not in (None, "") else ""


def _money(value: Any) -> Decimal:
    try:
        return Decimal(str(value if value is not None else 0)).quantize(CENT)
    except InvalidOperation as exc:
        raise RecordUnreadable(f"not an amount: {value!r}") from exc


def _when(value: Any, *, required: bool = False) -> Any:
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None and required:
        raise RecordUnreadable(f"not a date-time: {value!r}")
    return parsed


def _fulfillment_body(record: dict[str, Any]) -> dict[str, Any]:
    """The fulfillment as the pull stores it from a listed order (``pull.py``)."""
    return listed_fulfillment_body(record) or {"status": "PENDING", "fulfillments": []}


def _object(record: dict[str, Any], key: str) -> dict[str, Any]:
    value = record.get(key)
    return value if isinstance(value, dict) else {}


def _sync_mark_sent(order: Order, *, message: str) -> None:
    """The platform holds this order as it is now: nothing to push. Call in the order's
    transaction (no worker runs during a restore: no claim is in flight)."""
    sync, _ = OrderSync.objects.get_or_create(order=order)
    sync.pushed_version = sync.desired_version
    sync.claimed_version = 0
    sync.status = OrderSync.Status.SYNCED
    sync.attempts = sync.failures = 0
    sync.next_attempt_at = None
    lease.clear(sync)
    sync.last_error = ""
    sync.last_error_status = None
    sync.save()
    sync_event_add(
        order_id=order.id,
        kind=SyncEvent.Kind.PUSHED,
        version=sync.desired_version,
        actor=ADOPT_ACTOR,
        message=message,
    )


def order_adopt(*, seller_id: int, record: dict[str, Any]) -> tuple[Order, PullOutcome]:
    """Rebuild an order we lack from the platform's ``record``; its fulfillments stored."""
    customer, address = _object(record, "customer"), _object(record, "shipping_address")
    lines = record.get("order_lines")
    number = _text(record, "mp_order_number", 128)
    state = str(record.get("marketplace_state") or "")
    if not number or state not in MarketplaceState.values or not isinstance(lines, list):
        raise RecordUnreadable("an order record without a number, a known state or lines")
    with transaction.atomic():
        order = Order.objects.create(
            mp_order_number=number,
            seller_id=seller_id,
            state=state,
            sales_channel=_text(record, "sales_channel", 64),
            purchase_date=_when(record.get("purchase_date"), required=True),
            currency=_text(record, "currency", 3),
            location=_text(record, "location", 128),
            customer_full_name=_text(customer, "full_name", 200),
            customer_email=_text(customer, "email", 254),
            customer_phone=_text(customer, "phone", 40),
            customer_vat=_text(customer, "vat", 40),
            ship_full_name=_text(address, "full_name", 200),
            ship_address1=_text(address, "address1", 200),
            ship_address2=_text(address, "address2", 200),
            ship_address3=_text(address, "address3", 200),
            ship_city=_text(address, "city", 100),
            ship_state=_text(address, "state", 100),
            ship_postal_code=_text(address, "postal_code", 20),
            ship_country_code=_text(address, "country_code", 3),
            ship_country_code_iso2=_text(address, "country_code_iso2", 2),
            ship_address_type=_text(address, "address_type", 20),
            ship_phone=_text(address, "phone", 40),
            earliest_ship_date=_when(record.get("earliest_ship_date")),
            latest_ship_date=_when(record.get("latest_ship_date")),
            earliest_delivery_date=_when(record.get("earliest_delivery_date")),
            latest_delivery_date=_when(record.get("latest_delivery_date")),
            delivery_notes=_text(record, "delivery_notes", 10_000),
            # Not from intake: a retried create of this number gets a 409 to look at.
            intake_fingerprint="",
        )
        OrderLine.objects.bulk_create(_line(order, item) for item in lines)
        OrderSync.objects.create(order=order, desired_version=1, pushed_version=1)
        _sync_mark_sent(order, message=f"rebuilt from the platform's record as {state}")
    outcome = order_fulfillment_pull(order_id=order.id, body=_fulfillment_body(record))
    return order, outcome


def _line(order: Order, item: Any) -> OrderLine:
    if not isinstance(item, dict) or not item.get("mp_line_number"):
        raise RecordUnreadable("an order line without a number")
    quantity = item.get("quantity")
    if not isinstance(quantity, int) or isinstance(quantity, bool) or quantity < 1:
        raise RecordUnreadable(f"line {item['mp_line_number']}: quantity {quantity!r}")
    return OrderLine(
        order=order,
        mp_line_number=str(item["mp_line_number"])[:128],
        sku=_text(item, "sku", 128),
        product_name=_text(item, "product_name", 300),
        quantity=quantity,
        unit_price=_money(item.get("unit_price")),
        shipping_method=_text(item, "shipping_method", 64),
        shipping_price=_money(item.get("shipping_price")),
        taxes=[
            {"type": str(t.get("type") or ""), "amount": str(_money(t.get("amount")))}
            for t in item.get("taxes") or []
            if isinstance(t, dict)
        ],
        discounts=[
            {
                "name": str(d.get("name") or ""),
                "amount": str(_money(d.get("amount"))),
                "type": str(d.get("type") or ""),
            }
            for d in item.get("discounts") or []
            if isinstance(d, dict)
        ],
    )


def order_platform_state_take(*, order_id: int, record: dict[str, Any]) -> PullOutcome:
    """An order we hold behind the platform takes the platform's state (when the platform
    is ahead of us by legal moves) and then its fulfillments through the pull's store."""
    theirs = str(record.get("marketplace_state") or "")
    with transaction.atomic():
        order = Order.objects.select_for_update(no_key=True).get(pk=order_id)
        if state_ahead(order.state, theirs):
            previous = order.state
            order.state = theirs
            order.save(update_fields=["state", "updated_at"])
            _sync_mark_sent(order, message=f"{previous} → {theirs}: the platform's state taken")
        elif order.state == theirs and not _sync_up_to_date(order):
            _sync_mark_sent(order, message=f"the platform already holds {theirs}")
    outcome = order_fulfillment_pull(order_id=order_id, body=_fulfillment_body(record))
    return outcome


def _sync_up_to_date(order: Order) -> bool:
    sync = OrderSync.objects.filter(order=order).first()
    return sync is not None and sync.status == OrderSync.Status.SYNCED and sync.is_up_to_date
