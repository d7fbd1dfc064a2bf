"""The seller's side of returns: what v2 shows of them, the operations that move them
(``authorize`` ``{"rma"}``; ``reject`` ``{"reason"}`` under reading B of
``return_refusal`` only) and the return's refund (``POST /returns/{id}/refunds``, in
``return_refunds``).

One service for every way in: the v2 API, the control API and the order page's forms. The
rows are the marketplace-facing room's ``Return`` (v1 reads them). State rules (the
contract's readings): authorize and reject only from ``AWAITING_AUTHORIZATION``; refund
from ``AUTHORIZED``, or straight from ``AWAITING_AUTHORIZATION`` when every line is
preauthorized; refund once. An operation the state does not allow is a 409. Under reading
A a seller's refusal has no published state: ``reject`` is refused 409 and the return
stays ``AWAITING_AUTHORIZATION`` (the seller simply never authorizes it).
"""

from datetime import datetime
from typing import Any

from django.db import transaction

from sandbox.common import clock, switches
from sandbox.common.body_checks import decimal_of
from sandbox.orders_v2.dates import rfc3339
from sandbox.orders_v2.imports import event_add
from sandbox.orders_v2.models import V2Order
from sandbox.orders_v2.packages import PackageError
from sandbox.records.orders.after_sale import changed, money_number
from sandbox.records.orders.models import Return

OPERATIONS = ("authorize", "reject")
OPERATION_KEYS = {"authorize": frozenset({"rma"}), "reject": frozenset({"reason"})}
# v2's ``normalized_marketplace_state`` of a return (the reference names PENDING_AUTHORIZATION,
# PENDING_CONFIRMATION and CONFIRMED; the rest of its list is not in the stored copy).
NORMALIZED_STATES = {
    Return.AWAITING_AUTHORIZATION: "PENDING_AUTHORIZATION",
    Return.AUTHORIZED: "PENDING_CONFIRMATION",
    Return.REFUNDED: "CONFIRMED",
    Return.COMPLETED: "COMPLETED",
    Return.REJECTED: "REJECTED",
}


def allowed_states() -> tuple[str, ...]:
    """The states a return can be in: the reference's four (A), or with REJECTED (B)."""
    if switches.reading_b("return_refusal"):
        return Return.STATUSES
    return tuple(s for s in Return.STATUSES if s != Return.REJECTED)


def all_preauthorized(row: Return) -> bool:
    return all(line.get("preauthorized") is True for line in row.placed["return_lines"])


def refundable(row: Return) -> bool:
    return row.status == Return.AUTHORIZED or (
        row.status == Return.AWAITING_AUTHORIZATION and all_preauthorized(row)
    )


def allowed_operations(row: Return) -> list[str]:
    """What the seller may do now (``refund`` is the return-refund endpoint)."""
    allowed = []
    if row.status == Return.AWAITING_AUTHORIZATION:
        allowed.append("authorize")
        if switches.reading_b("return_refusal"):
            allowed.append("reject")
    if refundable(row):
        allowed.append("refund")
    return allowed


def return_line_id(row: Return, index: int) -> str:
    """A return line's v2 id (``feedamp_return_line_id``): stable, digits only."""
    return str(row.id * 1000 + index + 1)


def _v2_order(row: Return) -> V2Order | None:
    return V2Order.objects.filter(order_id=row.order_id).first()


def _date_time(day: object) -> str | None:
    """A v1 plain date as the RFC 3339 date-time v2 writes (midnight UTC)."""
    return f"{day}T00:00:00Z" if isinstance(day, str) and day else None


def return_json(row: Return, v2_order: V2Order | None = None) -> dict[str, Any]:
    """A return as v2 shows it (the reference's fields: ``marketplace_return_number``,
    ``imported_date``, ``request_date``/``respond_by_date`` as date-times, lines with their
    own ``id`` and ``requested_refund``; the marketplace's state as ``marketplace_state``)."""
    v2 = v2_order if v2_order is not None else _v2_order(row)
    line_ids = {line["mp_line_number"]: line["id"] for line in v2.lines} if v2 else {}
    placed = row.placed
    ids = {
        str(line["mp_return_line_number"]): return_line_id(row, index)
        for index, line in enumerate(placed["return_lines"])
    }
    return {
        "id": str(row.id),
        "order_id": str(v2.id) if v2 else None,
        "marketplace_order_number": row.order.mp_order_number,
        "marketplace_return_number": row.mp_return_number,
        "marketplace_state": row.status,
        "normalized_marketplace_state": NORMALIZED_STATES.get(row.status, row.status),
        "marketplace_state_changed_date": rfc3339(row.state_changed_at or row.created_at),
        "imported_date": rfc3339(row.created_at),
        "request_date": _date_time(placed.get("request_date")),
        "respond_by_date": _date_time(placed.get("respond_date")),
        "rma": row.rma or None,
        "notes": row.notes if row.status == Return.REJECTED else None,
        "return_type": placed.get("return_type"),
        "customer_email": placed.get("customer_email"),
        "shipping_address": placed.get("shipping_address"),
        "return_lines": [
            {
                "id": ids[str(line["mp_return_line_number"])],
                "marketplace_return_line_number": line["mp_return_line_number"],
                "marketplace_order_line_number": line["mp_order_line_number"],
                "feedamp_order_line_id": line_ids.get(line["mp_order_line_number"]),
                "sku": line["sku"],
                "product_name": line.get("product_name"),
                "quantity": line["quantity"],
                "currency": line["currency"],
                "unit_price": money_number(line["unit_price"]),
                "tax": money_number(line["tax"]),
                "requested_refund": money_number(
                    decimal_of(line["requested_refund_principal"])
                    + decimal_of(line["requested_refund_tax"])
                ),
                "reason": line.get("reason"),
                "preauthorized": line["preauthorized"],
                "carrier": line.get("carrier"),
                "tracking_number": line.get("tracking_number"),
            }
            for line in placed["return_lines"]
        ],
        "refund": return_refund_json(row) if row.refund_lines else None,
    }


def return_refund_json(row: Return) -> dict[str, Any]:
    """The return's refund as ``POST /returns/{id}/refunds`` answers it."""
    ids = {
        str(line["mp_return_line_number"]): return_line_id(row, index)
        for index, line in enumerate(row.placed["return_lines"])
    }
    return {
        "id": str(row.id),
        "merchant_refund_lines": [
            {
                "feedamp_return_line_id": ids.get(str(line["mp_return_line_number"])),
                "item_refund": money_number(line["principal_refund_amount"]),
                "shipping_refund": money_number(line["shipping_refund_amount"]),
                "refund_notes": line.get("refund_notes"),
                "merchant_full_refund": bool(line.get("merchant_full_refund")),
            }
            for line in row.refund_lines
        ],
    }


def _text_value(body: dict, key: str, *, max_length: int) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > max_length:
        raise PackageError(
            400,
            f"{key} must be a non-empty string of at most {max_length} characters",
            {key: f"required, a non-empty string (at most {max_length} characters)"},
        )
    return value


def body_check(op: str, body: dict) -> None:
    unknown = sorted(set(body) - OPERATION_KEYS[op])
    if unknown:
        raise PackageError(
            400, f"unknown fields: {', '.join(unknown)}", {key: "unknown field" for key in unknown}
        )


def _refused(row: Return, op: str) -> PackageError:
    if op == "reject" and not switches.reading_b("return_refusal"):
        return PackageError(
            409,
            "a return has no rejected state on this platform: leave it unauthorized "
            "(it stays AWAITING_AUTHORIZATION)",
        )
    return PackageError(409, f"cannot {op} a return that is {row.status}")


def run_operation(row: Return, op: str, body: dict, *, source: str = "v2 API") -> Return:
    """Run ``op`` with its body on the return (locked), or raise ``PackageError``."""
    if op not in OPERATIONS:
        raise PackageError(400, f"op must be one of {', '.join(OPERATIONS)}", {"op": "unknown"})
    body_check(op, body)
    with transaction.atomic():
        row = Return.objects.select_for_update().select_related("order").get(id=row.id)
        if op not in allowed_operations(row):
            raise _refused(row, op)
        now = clock.now()
        if op == "authorize":
            row.rma = _text_value(body, "rma", max_length=128)
            row.status = Return.AUTHORIZED
            changed(row, now, fields=["rma", "status"], new_state=True)
            detail = f"return {row.mp_return_number} authorized, RMA {row.rma} ({source})"
        else:
            row.notes = _text_value(body, "reason", max_length=2000)
            row.status = Return.REJECTED
            changed(row, now, fields=["notes", "status"], new_state=True)
            detail = f"return {row.mp_return_number} rejected: {row.notes} ({source})"
        return_event(row, f"return_{op}d", detail, now)
    return row


def return_event(row: Return, kind: str, detail: str, now: datetime) -> None:
    v2 = _v2_order(row)
    if v2 is not None:
        event_add(v2, kind, detail, now)
