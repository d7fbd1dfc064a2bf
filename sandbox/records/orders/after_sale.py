"""Returns and seller refunds as the marketplace-facing interface shows them, and the few
writes both sides share (a change of state, amounts, RMA or errors; a read).

The seller's side (``orders_v2``) moves these rows; this room's views only read them and
take the marketplace's verdicts (complete, errors). Money is kept as decimal strings and
answered as JSON numbers, as the reference writes it.
"""

from datetime import datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import QuerySet

from sandbox.common import switches
from sandbox.common.body_checks import decimal_of
from sandbox.records.orders.contract_fields import ADDRESS_FIELDS, RETURN_LINE_KEYS
from sandbox.records.orders.fulfillment import line_records
from sandbox.records.orders.models import Order, Refund, Return

REFUND_AMOUNTS = (
    "item_refund",
    "item_tax_refund",
    "shipping_refund",
    "shipping_tax_refund",
    "discount_refund",
)


def money_number(value: Any) -> float | int:
    """A decimal as the JSON number the reference shows (``6.99``)."""
    amount = decimal_of(value)
    return int(amount) if amount == amount.to_integral_value() else float(amount)


def money_text(value: Any) -> str:
    return str(decimal_of(value))


# The reference: "format ISO 8601 default time zone is America/New_York".
PLATFORM_ZONE = ZoneInfo("America/New_York")


def platform_date(moment: datetime) -> str:
    """``date_created``: the calendar date of an instant in the platform's zone."""
    return moment.astimezone(PLATFORM_ZONE).date().isoformat()


def shipped_quantities(order: Order) -> dict[str, int]:
    """Units the marketplace can see shipped, per order line."""
    return {
        number: sum(int(s.get("quantity") or 0) for s in record.get("shipments", []))
        for number, record in line_records(order).items()
    }


def returned_quantities(order: Order, *, excluding: int | None = None) -> dict[str, int]:
    """Units earlier returns of the order take, per order line (rejected ones take none)."""
    taken: dict[str, int] = {}
    rows = order.returns.exclude(status=Return.REJECTED)
    if excluding is not None:
        rows = rows.exclude(id=excluding)
    for row in rows:
        for line in row.placed.get("return_lines", []):
            number = line["mp_order_line_number"]
            taken[number] = taken.get(number, 0) + int(line["quantity"])
    return taken


RETURN_MONEY = ("requested_refund_principal", "requested_refund_tax", "unit_price", "tax")


def _return_line_json(line: dict[str, Any]) -> dict[str, Any]:
    """A return line with every named field (null when not sent), money as JSON numbers."""
    shown = {key: line.get(key) for key in RETURN_LINE_KEYS}
    for key in RETURN_MONEY:
        shown[key] = money_number(line[key])
    return shown


def return_json(row: Return) -> dict[str, Any]:
    placed = row.placed
    address = placed.get("shipping_address")
    if isinstance(address, dict):
        address = {key: address[key] for key in ADDRESS_FIELDS if key in address}
    return {
        "status": row.status,
        "rma": row.rma or None,
        "mp_return_number": row.mp_return_number,
        "mp_order_number": row.order.mp_order_number,
        "request_date": placed.get("request_date"),
        "respond_date": placed.get("respond_date"),
        "shipping_address": address,
        "customer_email": placed.get("customer_email"),
        "return_type": placed.get("return_type"),
        "return_lines": [_return_line_json(line) for line in placed["return_lines"]],
        "notes": row.notes if row.status == Return.REJECTED else None,
    }


def return_refunds_json(row: Return) -> dict[str, Any]:
    return {
        "status": row.status,
        "rma": row.rma or None,
        "merchant_refund_lines": [
            {
                "mp_return_line_number": line["mp_return_line_number"],
                "principal_refund_amount": money_number(line["principal_refund_amount"]),
                "shipping_refund_amount": money_number(line["shipping_refund_amount"]),
            }
            for line in row.refund_lines
        ],
        "errors": [
            {
                "code": e["code"],
                "message": e["message"],
                "mp_return_line_number": e.get("mp_return_line_number"),
            }
            for e in row.errors
        ],
    }


def refund_notes(lines: list[dict]) -> str | None:
    """The v2 lines' ``refund_notes`` joined with ``; `` (when no line has any: null, or
    ``""`` under reading B of ``refund_notes_empty``)."""
    notes = [line["refund_notes"] for line in lines if line.get("refund_notes")]
    if notes:
        return "; ".join(notes)
    return "" if switches.reading_b("refund_notes_empty") else None


def refund_json(row: Refund) -> dict[str, Any]:
    """The v1 view of a v2 refund (the contract's readings: ``reason`` is the v2 line's
    ``refund_reason`` upper-cased, ``notes`` the lines' ``refund_notes`` joined;
    ``date_created`` a date, in the platform's zone like its filters)."""
    return {
        "feedamp_refund_id": row.id,
        "mp_order_number": row.order.mp_order_number,
        "notes": refund_notes(row.lines),
        "status": row.status,
        "date_created": platform_date(row.created_at),
        "merchant_refund_lines": [
            {
                "mp_line_number": line["mp_line_number"],
                "currency": line["currency"],
                "refund_quantity": line["refund_quantity"],
                **{key: money_number(line[key]) for key in REFUND_AMOUNTS},
                "reason": str(line["refund_reason"]).upper(),
            }
            for line in row.lines
        ],
        "errors": [{"code": e["code"], "message": e["message"]} for e in row.errors],
    }


def line_takes(line: dict) -> Decimal:
    """What one refund line takes from its order line (the contract's reading)."""
    d = {key: decimal_of(line.get(key, 0)) for key in REFUND_AMOUNTS}
    return (
        d["item_refund"]
        + d["item_tax_refund"]
        + d["shipping_refund"]
        + d["shipping_tax_refund"]
        - d["discount_refund"]
    )


def mark_read(rows: "QuerySet[Return] | QuerySet[Refund] | list[Return] | list[Refund]") -> None:
    """The marketplace read these rows in their current state."""
    unread = [row.id for row in rows if not row.read_in_state]
    if not unread:
        return
    model = type(rows[0])
    model.objects.filter(id__in=unread).update(read_in_state=True)
    for row in rows:
        row.read_in_state = True


def changed(row: Return | Refund, now: datetime, *, fields: list[str], new_state: bool) -> None:
    """Save a change the marketplace must be able to find with ``updated_after``."""
    row.updated_at = now
    update = [*fields, "updated_at"]
    if isinstance(row, Return) and "status" in fields:
        row.state_changed_at = now
        update.append("state_changed_at")
    if new_state:
        row.read_in_state = False
        update.append("read_in_state")
    row.save(update_fields=update)


def inspected_return_json(row: Return) -> dict[str, Any]:
    """The control API's view: the v1 return, its refund view, and the sandbox's record."""
    return {
        "id": row.id,
        **return_json(row),
        **{k: v for k, v in return_refunds_json(row).items() if k not in ("status", "rma")},
        "seller": row.order.seller.username,
        "client_id": row.order.client.client_id,
        "notes": row.notes or None,
        "read_in_state": row.read_in_state,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
    }


def inspected_refund_json(row: Refund) -> dict[str, Any]:
    return {
        **refund_json(row),
        "seller": row.order.seller.username,
        "client_id": row.order.client.client_id,
        "cp_refund_number": row.cp_refund_number or None,
        "pauses": row.pauses,
        "resolutions": row.resolutions,
        "paused_at": row.paused_at.isoformat() if row.paused_at else None,
        "history": row.history,
        "created_at": row.created_at.isoformat(),
        "read_in_state": row.read_in_state,
        "updated_at": row.updated_at.isoformat(),
    }
