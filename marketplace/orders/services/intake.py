"""Intake: creating orders and changing their marketplace state.

Every write also writes the outbox row (``OrderSync``) in the same transaction and
queues the push on commit.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from marketplace.orders.errors import (
    DuplicateOrderConflict,
    IllegalTransition,
    IntakeInvalid,
    OrderNotFound,
)
from marketplace.orders.intake_schema import CENT, OrderIn, cross_field_errors
from marketplace.orders.models import MarketplaceState, Order, OrderLine
from marketplace.orders.services.outbox import order_sync_create, order_sync_mark_changed
from marketplace.orders.states import INTAKE_TARGETS, transition_allowed
from sellers.models import Seller


def _canonical(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value.quantize(CENT))
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def intake_fingerprint(data: OrderIn) -> str:
    """SHA-256 of the body after validation (so whitespace or key order does not matter)."""
    canonical = json.dumps(_canonical(data.model_dump()), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _seller_for(username: str) -> Seller:
    user = get_user_model().objects.filter(username=username).first()
    seller = Seller.objects.filter(user=user).first() if user else None
    if seller is None:
        raise IntakeInvalid({"seller": [f"no seller with username {username!r}"]})
    return seller


def _money(value: Decimal) -> Decimal:
    return value.quantize(CENT)


def _build_order(*, data: OrderIn, seller: Seller, fingerprint: str) -> Order:
    customer, address = data.customer, data.shipping_address
    order = Order.objects.create(
        mp_order_number=data.mp_order_number,
        seller=seller,
        state=data.marketplace_state,
        sales_channel=data.sales_channel,
        purchase_date=data.purchase_date,
        currency=data.currency,
        location=data.location or "",
        customer_full_name=customer.full_name,
        customer_email=customer.email or "",
        customer_phone=customer.phone or "",
        customer_vat=customer.vat or "",
        ship_full_name=address.full_name,
        ship_address1=address.address1,
        ship_address2=address.address2 or "",
        ship_address3=address.address3 or "",
        ship_city=address.city,
        ship_state=address.state or "",
        ship_postal_code=address.postal_code or "",
        ship_country_code=address.country_code,
        ship_country_code_iso2=address.country_code_iso2 or "",
        ship_address_type=address.address_type or "",
        ship_phone=address.phone or "",
        earliest_ship_date=data.earliest_ship_date,
        latest_ship_date=data.latest_ship_date,
        earliest_delivery_date=data.earliest_delivery_date,
        latest_delivery_date=data.latest_delivery_date,
        delivery_notes=data.delivery_notes or "",
        intake_fingerprint=fingerprint,
    )
    OrderLine.objects.bulk_create(
        OrderLine(
            order=order,
            mp_line_number=line.mp_line_number,
            sku=line.sku,
            product_name=line.product_name,
            quantity=line.quantity,
            unit_price=_money(line.unit_price),
            shipping_method=line.shipping_method or "",
            shipping_price=_money(line.shipping_price),
            taxes=[{"type": t.type, "amount": str(_money(t.amount))} for t in line.taxes],
            discounts=[
                {"name": d.name, "amount": str(_money(d.amount)), "type": d.type}
                for d in line.discounts
            ],
        )
        for line in data.order_lines
    )
    return order


def order_create(*, data: OrderIn, actor: str = "intake") -> tuple[Order, bool]:
    """Store a new order and queue its push. Returns ``(order, created)``.

    Repeating a create with the same body returns the existing order (``created`` is
    False): clients may retry a create whose answer they did not receive. The same
    number with a different body raises ``DuplicateOrderConflict``.
    """
    errors = cross_field_errors(data)
    if errors:
        raise IntakeInvalid(errors)
    fingerprint = intake_fingerprint(data)
    existing = Order.objects.filter(mp_order_number=data.mp_order_number).first()
    if existing is not None:
        return _existing_or_conflict(existing, fingerprint), False
    seller = _seller_for(data.seller)
    try:
        with transaction.atomic():
            order = _build_order(data=data, seller=seller, fingerprint=fingerprint)
            order_sync_create(order=order, actor=actor)
    except IntegrityError:
        # A concurrent create of the same number won the race.
        existing = Order.objects.filter(mp_order_number=data.mp_order_number).first()
        if existing is None:
            raise
        return _existing_or_conflict(existing, fingerprint), False
    return order, True


def _existing_or_conflict(order: Order, fingerprint: str) -> Order:
    if order.intake_fingerprint != fingerprint:
        raise DuplicateOrderConflict(order.mp_order_number)
    return order


def order_state_change(
    *,
    mp_order_number: str,
    state: str,
    actor: str = "intake",
    via_intake: bool = True,
    same_is_conflict: bool = False,
) -> Order:
    """Move the order to ``state`` (idempotent when it is already there) and queue a push."""
    with transaction.atomic():
        # FOR NO KEY UPDATE: a state change never touches the key, and a plain FOR UPDATE
        # would block the foreign-key checks (FOR KEY SHARE) of a push recording its
        # SyncEvent while holding the sync row this change waits for: a deadlock.
        order = (
            Order.objects.select_for_update(no_key=True)
            .filter(mp_order_number=mp_order_number)
            .first()
        )
        if order is None:
            raise OrderNotFound(mp_order_number)
        if order.state == state:
            if same_is_conflict:
                raise IllegalTransition(order.state, state, f"the order is already {state}")
            return order
        if via_intake and state not in INTAKE_TARGETS:
            raise IllegalTransition(
                order.state,
                state,
                f"{state} is not set through intake: the order becomes SHIPPED when the "
                "seller's fulfillment covers every line",
            )
        if not transition_allowed(order.state, state):
            raise IllegalTransition(order.state, state)
        previous = order.state
        order.state = state
        order.save(update_fields=["state", "updated_at"])
        order_sync_mark_changed(order=order, actor=actor, message=f"{previous} → {state}")
        if state == MarketplaceState.AWAITING_SHIPMENT and order.fulfillment_pulled_at:
            # The seller may have shipped while the order was PENDING: settle now.
            from marketplace.orders.services.fulfillment import order_settle

            order_settle(order_id=order.id)
    return order


def order_cancel(
    *, mp_order_number: str, actor: str = "intake", again_is_conflict: bool = False
) -> Order:
    """The marketplace cancels the order; the platform learns it through a push.

    ``again_is_conflict``: an order already cancelled is an IllegalTransition (the intake
    API's cancel answers 409 then, as its README says: a second cancel is not allowed)."""
    return order_state_change(
        mp_order_number=mp_order_number,
        state=MarketplaceState.CANCELLED,
        actor=actor,
        same_is_conflict=again_is_conflict,
    )
