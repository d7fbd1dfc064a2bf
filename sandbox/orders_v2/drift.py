"""Drift: changes made at the platform "elsewhere" (a support action, a fix on the
platform's side, a lost update), for tests of the marketplace's reconciliation.

None of them moves what a marketplace's cursor reads: an order's ``seller_updated_at``
and its place in the listing stay, a return's ``updated_at`` (``updated_after``) stays,
a refund's stays. ``GET /orders/{n}``, its fulfillments, refunds and returns show the
change at once; the ``seller_updated_after`` listing never does. Each call records a
``DriftEvent`` (``GET /sandbox/api/drift``; counted in ``/sandbox/api/state``).

Kinds (the body's ``kind``, see sandbox/README.md):
* ``order_state``: the order's marketplace state set (CANCELLED by support, say).
* ``forget_update``: the platform loses the marketplace's last state change (the state
  goes back to the one before it): the platform is behind the marketplace.
* ``forget_order``: the platform loses the order altogether (with its returns and
  refunds): the marketplace must place it again.
* ``fulfillment_drop`` / ``fulfillment_alter``: one shipment of a line dropped, or its
  tracking number, carrier or quantity changed (``drift_fulfillment``).
* ``refund_status`` / ``refund_amounts``: a seller refund completed (or set to any state)
  elsewhere, or the amounts of one of its lines changed.
* ``return_status``: a return completed (or set to any state) elsewhere, optionally with
  the refund amounts it carries.
"""

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction

from sandbox.common import clock
from sandbox.common.control import ControlError
from sandbox.orders_v2.drift_fulfillment import shipment_drift
from sandbox.records.orders.after_sale import REFUND_AMOUNTS, refund_json, return_json
from sandbox.records.orders.fulfillment import order_json
from sandbox.records.orders.models import DriftEvent, Order, Refund, Return
from sandbox.records.orders.state_changes import marketplace_state_changed

MARKETPLACE_STATES = ("PENDING", "AWAITING_SHIPMENT", "SHIPPED", "CANCELLED")
RETURN_REFUND_KEYS = ("mp_return_line_number", "principal_refund_amount", "shipping_refund_amount")

# (target, before, after) of one change.
Change = tuple[str, Any, Any]


def _choice(body: dict, key: str, allowed: tuple[str, ...], default: str | None = None) -> str:
    value = body.get(key, default)
    if value not in allowed:
        raise ControlError("bad_request", f"{key} must be one of {', '.join(allowed)}", 400)
    return str(value)


def _money(value: object, key: str) -> str:
    """A decimal text of a non-negative amount (sent as a number or a string)."""
    try:
        amount = Decimal(str(value)) if not isinstance(value, bool) else Decimal("NaN")
    except InvalidOperation:
        amount = Decimal("NaN")
    if not amount.is_finite() or amount < 0:
        raise ControlError("bad_request", f"{key} must be an amount >= 0", 400)
    return str(amount)


def _state_set(order: Order, state: str) -> None:
    order.marketplace_state = state
    order.placed = {**order.placed, "marketplace_state": state}
    order.save(update_fields=["marketplace_state", "placed"])
    # The seller's v2 order follows its marketplace's state (the v2 view, not v1's cursor).
    marketplace_state_changed(order, state, clock.now())


def order_state(order: Order, body: dict) -> Change:
    state = _choice(body, "marketplace_state", MARKETPLACE_STATES)
    before = order_json(order)
    _state_set(order, state)
    return "order", before, order_json(order)


def forget_update(order: Order, body: dict) -> Change:
    """The last state change the marketplace PUT is lost: the order goes back to the state
    before it (its history loses the row, as if the PUT never arrived)."""
    history = list(order.history.order_by("-id")[:2])
    if len(history) < 2:
        raise ControlError("conflict", "the order has no earlier state to go back to", 409)
    before = order_json(order)
    history[0].delete()
    _state_set(order, history[1].state)
    return "order", before, order_json(order)


def forget_order(order: Order, body: dict) -> Change:
    before = order_json(order)
    order.delete()  # its history, returns, refunds and v2 order go with it
    return "order", before, None


def _refund(order: Order, body: dict) -> Refund:
    raw = body.get("refund_id")
    row = None
    if isinstance(raw, int | str) and not isinstance(raw, bool) and str(raw).isdigit():
        row = order.refunds.filter(id=int(raw)).first()
    if row is None:
        raise ControlError("not_found", f"order has no refund {raw!r} (refund_id)", 404)
    return row


def refund_status(order: Order, body: dict) -> Change:
    row = _refund(order, body)
    before = refund_json(row)
    row.status = _choice(body, "status", Refund.STATUSES, Refund.COMPLETE)
    if row.status != Refund.PAUSED:
        row.errors = []
    row.save(update_fields=["status", "errors"])  # updated_at stays: no cursor sees it
    return f"refund {row.id}", before, refund_json(row)


def refund_amounts(order: Order, body: dict) -> Change:
    row = _refund(order, body)
    number = body.get("mp_line_number", row.lines[0]["mp_line_number"] if row.lines else None)
    line = next((ln for ln in row.lines if ln["mp_line_number"] == number), None)
    if line is None:
        raise ControlError("not_found", f"refund {row.id} has no line {number!r}", 404)
    amounts = {key: _money(body[key], key) for key in REFUND_AMOUNTS if key in body}
    if not amounts:
        raise ControlError(
            "bad_request", f"name at least one of {', '.join(REFUND_AMOUNTS)} to change", 400
        )
    before = refund_json(row)
    line.update(amounts)
    row.save(update_fields=["lines"])
    return f"refund {row.id}", before, refund_json(row)


def _return_refund_lines(row: Return, raw: object) -> list[dict[str, str]]:
    numbers = {str(line["mp_return_line_number"]) for line in row.placed["return_lines"]}
    if not isinstance(raw, list) or not raw:
        raise ControlError("bad_request", "refund_lines must be a non-empty list", 400)
    lines = []
    for item in raw:
        if not isinstance(item, dict) or str(item.get("mp_return_line_number")) not in numbers:
            raise ControlError(
                "bad_request",
                f"each refund line names one of the return's lines ({', '.join(sorted(numbers))})",
                400,
            )
        lines.append(
            {
                "mp_return_line_number": str(item["mp_return_line_number"]),
                "principal_refund_amount": _money(
                    item.get("principal_refund_amount", 0), "principal_refund_amount"
                ),
                "shipping_refund_amount": _money(
                    item.get("shipping_refund_amount", 0), "shipping_refund_amount"
                ),
            }
        )
    return lines


def return_status(order: Order, body: dict) -> Change:
    row = order.returns.filter(mp_return_number=str(body.get("mp_return_number"))).first()
    if row is None:
        raise ControlError(
            "not_found", f"order has no return {body.get('mp_return_number')!r}", 404
        )
    before = {**return_json(row), "refund_lines": row.refund_lines}
    row.status = _choice(body, "status", Return.STATUSES, Return.COMPLETED)
    fields = ["status"]
    if "refund_lines" in body:
        row.refund_lines = _return_refund_lines(row, body["refund_lines"])
        fields.append("refund_lines")
    # Neither updated_at (``updated_after``) nor state_changed_at (v2's filter) moves.
    row.save(update_fields=fields)
    return (
        f"return {row.mp_return_number}",
        before,
        {**return_json(row), "refund_lines": row.refund_lines},
    )


def _fulfillment_drop(order: Order, body: dict) -> Change:
    drift = shipment_drift(order, body, drop=True)
    return drift.target, drift.before, drift.after


def _fulfillment_alter(order: Order, body: dict) -> Change:
    drift = shipment_drift(order, body, drop=False)
    return drift.target, drift.before, drift.after


KINDS: dict[str, Callable[[Order, dict], Change]] = {
    "order_state": order_state,
    "forget_update": forget_update,
    "forget_order": forget_order,
    "fulfillment_drop": _fulfillment_drop,
    "fulfillment_alter": _fulfillment_alter,
    "refund_status": refund_status,
    "refund_amounts": refund_amounts,
    "return_status": return_status,
}


def drift_apply(order: Order, body: dict) -> DriftEvent:
    """Make the change ``body["kind"]`` names and record it."""
    kind = _choice(body, "kind", tuple(KINDS))
    seller, client_id = order.seller.username, order.client.client_id
    number = order.mp_order_number
    with transaction.atomic():
        target, before, after = KINDS[kind](order, body)
        return DriftEvent.objects.create(
            order=None if kind == "forget_order" else order,
            seller=seller,
            client_id=client_id,
            mp_order_number=number,
            kind=kind,
            target=target,
            before=before,
            after=after,
            at=clock.now(),
        )


def drift_json(event: DriftEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "kind": event.kind,
        "seller": event.seller,
        "client_id": event.client_id,
        "mp_order_number": event.mp_order_number,
        "target": event.target,
        "before": event.before,
        "after": event.after,
        "at": event.at.isoformat(),
    }
