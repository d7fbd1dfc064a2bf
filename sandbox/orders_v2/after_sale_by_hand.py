"""Playing the seller by hand on returns and refunds (control API and the order pages):
thin defaults over the same services the v2 API uses (``returns.run_operation``,
``refunds.refund_create``)."""

import secrets
from typing import Any

from sandbox.common.control import ControlError
from sandbox.orders_v2 import refund_resolve, refunds, return_refunds, returns
from sandbox.orders_v2.imports import order_import
from sandbox.orders_v2.models import V2Order
from sandbox.records.orders.after_sale import REFUND_AMOUNTS
from sandbox.records.orders.models import Order, Refund, Return


def return_of(order: Order, mp_return_number: str) -> Return:
    row = order.returns.select_related("order").filter(mp_return_number=mp_return_number).first()
    if row is None:
        raise ControlError("not_found", f"no return {mp_return_number!r} on this order", 404)
    return row


def refund_body(row: Return, spec: dict[str, Any]) -> dict[str, Any]:
    """The v2 return-refund body a by-hand refund stands for: ``merchant_refund_lines`` as
    given, or ``lines`` by ``mp_return_line_number`` (``principal_refund_amount``,
    ``shipping_refund_amount``), or by default a full refund of every line as asked."""
    if "merchant_refund_lines" in spec:
        return {"merchant_refund_lines": spec["merchant_refund_lines"]}
    ids = {
        str(line["mp_return_line_number"]): returns.return_line_id(row, index)
        for index, line in enumerate(row.placed["return_lines"])
    }
    if not spec.get("lines"):
        return {
            "merchant_refund_lines": [
                {"feedamp_return_line_id": line_id, "merchant_full_refund": True}
                for line_id in ids.values()
            ]
        }
    lines = []
    for raw in spec["lines"]:
        if not isinstance(raw, dict):
            raise ControlError("bad_request", "each line must be an object", 400)
        number = str(raw.get("mp_return_line_number"))
        lines.append(
            {
                "feedamp_return_line_id": ids.get(number, f"unknown:{number}"),
                "item_refund": raw.get("principal_refund_amount"),
                "shipping_refund": raw.get("shipping_refund_amount", 0),
            }
        )
    return {"merchant_refund_lines": lines}


def operation_by_hand(row: Return, op: str, spec: dict[str, Any], *, source: str) -> Return:
    """``authorize`` (``rma`` defaults to a new one), ``reject`` (``reason`` defaults; reading
    B only), ``refund`` (the v2 return-refund endpoint; see ``refund_body``)."""
    if op == "authorize":
        body = {"rma": spec.get("rma") or f"RMA-{secrets.token_hex(4).upper()}"}
    elif op == "reject":
        body = {"reason": spec.get("reason") or "not eligible for return"}
    elif op == "refund":
        return return_refunds.return_refund(row, refund_body(row, spec), source=source)
    else:
        ops = ", ".join((*returns.OPERATIONS, "refund"))
        raise ControlError("bad_request", f"op must be one of {ops}", 400)
    return returns.run_operation(row, op, body, source=source)


def v2_order_of(order: Order) -> V2Order:
    v2 = V2Order.objects.filter(order=order).first()
    return v2 if v2 is not None else order_import(order)


def _v2_lines(order: Order, v2: V2Order, raw_lines: Any) -> list[dict[str, Any]]:
    """By-hand refund lines as v2 posts them: missing amounts are 0, the currency the
    order's, the quantity 0, the reason ``other`` (a reason is lower-cased, as v2 writes
    it); a line's ``mp_line_number`` names the marketplace line."""
    by_number = {line["mp_line_number"]: line["id"] for line in v2.lines}
    if not isinstance(raw_lines, list) or not raw_lines:
        raise ControlError("bad_request", "refund_lines (a non-empty list) is required", 400)
    lines = []
    for raw in raw_lines:
        if not isinstance(raw, dict):
            raise ControlError("bad_request", "each refund line must be an object", 400)
        line = dict(raw)
        if "mp_line_number" in line:
            number = str(line.pop("mp_line_number"))
            line["feedamp_order_line_id"] = by_number.get(number, f"unknown:{number}")
        line.setdefault("currency", order.placed.get("currency"))
        line.setdefault("refund_quantity", 0)
        reason = line.get("refund_reason") or "other"
        line["refund_reason"] = reason.lower() if isinstance(reason, str) else reason
        for key in REFUND_AMOUNTS:
            line.setdefault(key, 0)
        lines.append(line)
    return lines


def seller_refund_by_hand(order: Order, spec: dict[str, Any], *, source: str) -> Any:
    """``{"cp_refund_number"?, "refund_lines": [{"mp_line_number" or "feedamp_order_line_id",
    "item_refund"?, …}]}`` (defaults as ``_v2_lines``)."""
    v2 = v2_order_of(order)
    body: dict[str, Any] = {"refund_lines": _v2_lines(order, v2, spec.get("refund_lines"))}
    if spec.get("cp_refund_number"):
        body["cp_refund_number"] = spec["cp_refund_number"]
    return refunds.refund_create(v2, body, source=source)


def refund_of(order: Order, refund_id: str) -> Refund:
    row = (
        order.refunds.select_related("order")
        .filter(id=int(refund_id) if refund_id.isdigit() and len(refund_id) < 19 else -1)
        .first()
    )
    if row is None:
        raise ControlError("not_found", f"no refund {refund_id!r} on this order", 404)
    return row


def refund_resolve_by_hand(row: Refund, spec: dict[str, Any], *, source: str) -> Refund:
    """``{"fit": true}`` (cut each line to what the buyer paid) or ``{"refund_lines": […]}``
    (new lines, by-hand shape): the seller resolves a PAUSED refund (409 otherwise)."""
    unknown = sorted(set(spec) - {"fit", "refund_lines", "client_id", "seller"})
    if unknown:
        raise ControlError("bad_request", f"unknown fields: {', '.join(unknown)}", 400)
    if (spec.get("fit") is True) == ("refund_lines" in spec):
        raise ControlError("bad_request", 'give either "fit": true or "refund_lines"', 400)
    lines = None
    if "refund_lines" in spec:
        v2 = v2_order_of(row.order)
        lines = refund_resolve.lines_from_body(v2, _v2_lines(row.order, v2, spec["refund_lines"]))
    return refund_resolve.refund_resolve(row, lines=lines, source=source)
