"""Each order of a pass against the platform's: state, lines and fulfillments (by digest).

An order whose push is on its way (its outbox row not synced: pending, retrying, a dead
letter staff see already) is not judged on what we push: the outbox holds that. Its
fulfillments are still compared (they are the seller's, read by the pull).
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal, InvalidOperation
from typing import Any

from marketplace.orders.models import MarketplaceState, Order, OrderSync
from marketplace.orders.services.fulfillment import fulfillment_digest
from marketplace.reconcile import kinds
from marketplace.reconcile.models import FindingAction
from marketplace.reconcile.pass_state import PassState
from marketplace.reconcile.repairs import order_send_again

# How far along the marketplace's states an order is: a state the platform holds with a
# lower rank than ours is an older one of ours (a push it missed).
STATE_RANK: dict[str, int] = {
    MarketplaceState.PENDING: 0,
    MarketplaceState.AWAITING_SHIPMENT: 1,
    MarketplaceState.SHIPPED: 2,
    MarketplaceState.CANCELLED: 2,
}


def _money(value: Any) -> str:
    try:
        return str(Decimal(str(value)).normalize())
    except (InvalidOperation, ValueError):
        return repr(value)


def _lines_view(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a line is, on both sides: number, SKU, quantity, price (prices as numbers)."""
    return sorted(
        (
            {
                "mp_line_number": str(line.get("mp_line_number")),
                "sku": str(line.get("sku")),
                "quantity": line.get("quantity"),
                "unit_price": _money(line.get("unit_price")),
            }
            for line in lines
            if isinstance(line, dict)
        ),
        key=lambda line: line["mp_line_number"],
    )


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _our_lines(order: Order) -> list[dict[str, Any]]:
    return _lines_view(
        [
            {
                "mp_line_number": line.mp_line_number,
                "sku": line.sku,
                "quantity": line.quantity,
                "unit_price": line.unit_price,
            }
            for line in order.lines.all()
        ]
    )


def _nothing_shipped(fulfillments: Any) -> bool:
    return isinstance(fulfillments, list) and not any(
        isinstance(line, dict) and (line.get("shipments") or line.get("cancellations"))
        for line in fulfillments
    )


def _in_flight(sync: OrderSync | None) -> bool:
    """Our push of this order is not confirmed (on its way, or a dead letter)."""
    return sync is None or sync.status != OrderSync.Status.SYNCED or not sync.is_up_to_date


def order_compare(state: PassState, order: Order) -> None:
    state.count("orders")
    number = order.mp_order_number
    theirs = state.side.orders.get(number)
    sync = getattr(order, "sync", None)
    in_flight = _in_flight(sync)
    if theirs is None:
        if not in_flight and sync is not None and sync.pushed_version >= 1:
            state.record(
                kind=kinds.ORDER_MISSING,
                object_type="order",
                object_key=number,
                ours={"state": order.state, "pushed_version": sync.pushed_version},
                theirs={},
                action=FindingAction.RESENT,
                note="the platform does not list it: pushed again",
            )
            order_send_again(order=order, note="reconciliation: missing at the platform")
        return
    if not in_flight:
        _state_compare(state, order, theirs)
        _lines_compare(state, order, theirs)
    _fulfillments_compare(state, order, theirs)


def _state_compare(state: PassState, order: Order, theirs: dict[str, Any]) -> None:
    their_state = str(theirs.get("marketplace_state") or "")
    if their_state == order.state:
        return
    ours = {"state": order.state}
    seen = {"marketplace_state": their_state, "status": theirs.get("status")}
    older = STATE_RANK.get(their_state)
    if older is not None and older < STATE_RANK.get(order.state, 0):
        state.record(
            kind=kinds.ORDER_STATE_BEHIND,
            object_type="order",
            object_key=order.mp_order_number,
            ours=ours,
            theirs=seen,
            action=FindingAction.RESENT,
            note=f"the platform holds {their_state}: pushed {order.state} again",
        )
        order_send_again(order=order, note=f"reconciliation: the platform holds {their_state}")
        return
    state.record(
        kind=kinds.ORDER_STATE_CONFLICT,
        object_type="order",
        object_key=order.mp_order_number,
        ours=ours,
        theirs=seen,
        action=FindingAction.STAFF,
        note="the platform holds a state we did not send: both sides moved",
    )


def _lines_compare(state: PassState, order: Order, theirs: dict[str, Any]) -> None:
    their_lines = theirs.get("order_lines")
    if not isinstance(their_lines, list):
        return  # the listing does not carry lines: nothing to compare
    ours, seen = _our_lines(order), _lines_view(their_lines)
    if _digest(ours) == _digest(seen):
        return
    state.record(
        kind=kinds.ORDER_LINES_DIFFER,
        object_type="order",
        object_key=order.mp_order_number,
        ours={"order_lines": ours},
        theirs={"order_lines": seen},
        action=FindingAction.STAFF,
        note="lines cannot change once placed: a person must look",
    )


def _fulfillments_compare(state: PassState, order: Order, theirs: dict[str, Any]) -> None:
    fulfillments = theirs.get("fulfillments")
    if not isinstance(fulfillments, list):
        return
    seen = fulfillment_digest({"fulfillments": fulfillments})
    if seen == order.fulfillment_digest:
        return
    if not order.fulfillment_digest and _nothing_shipped(fulfillments):
        return  # never read, and nothing to read
    state.record(
        kind=kinds.FULFILLMENT_BEHIND,
        object_type="order",
        object_key=order.mp_order_number,
        ours={
            "fulfillment_status": order.fulfillment_status,
            "fulfillment_digest": order.fulfillment_digest,
            "fulfillment_pulled_at": str(order.fulfillment_pulled_at or ""),
        },
        theirs={"status": theirs.get("status"), "fulfillments": fulfillments},
        action=FindingAction.PULL_FORCED,
        note="the next pull reads this order on its own",
    )
    state.reread_orders.add(order.mp_order_number)
    state.pull_due_now = True
