"""The seller's side of returns: what v2 shows of them and the operations that move them
(``authorize`` ``{"rma"}``, ``reject`` ``{"reason"}``, ``refund`` ``{"lines": […]}``).

One service for every way in: the v2 API's ``run-operation``, the control API and the
order page's forms. The rows are the marketplace-facing room's ``Return`` (v1 reads them).
State rules (the contract's readings): authorize and reject only from
``AWAITING_AUTHORIZATION``; refund from ``AUTHORIZED``, or straight from
``AWAITING_AUTHORIZATION`` when every line is preauthorized; refund once. An operation the
state does not allow is a 409. Refund amounts are not checked against anything: the
platform accepts over-refunds, the marketplace judges them.
"""

from typing import Any

from django.db import transaction

from sandbox.common import clock
from sandbox.order_source.after_sale import changed, money_number, money_text
from sandbox.order_source.models import Return
from sandbox.order_source.returns_validation import money_check as _money
from sandbox.order_source.validation import Problems
from sandbox.orders_v2.dates import rfc3339
from sandbox.orders_v2.imports import event_add
from sandbox.orders_v2.models import V2Order
from sandbox.orders_v2.packages import PackageError

OPERATIONS = ("authorize", "reject", "refund")
OPERATION_KEYS = {
    "authorize": frozenset({"rma"}),
    "reject": frozenset({"reason"}),
    "refund": frozenset({"lines"}),
}
REFUND_LINE_KEYS = frozenset(
    {"mp_return_line_number", "principal_refund_amount", "shipping_refund_amount"}
)


def all_preauthorized(row: Return) -> bool:
    return all(line.get("preauthorized") is True for line in row.placed["return_lines"])


def allowed_operations(row: Return) -> list[str]:
    if row.status == Return.AWAITING_AUTHORIZATION:
        return ["authorize", "reject", *(["refund"] if all_preauthorized(row) else [])]
    if row.status == Return.AUTHORIZED:
        return ["refund"]
    return []


def _v2_order(row: Return) -> V2Order | None:
    return V2Order.objects.filter(order_id=row.order_id).first()


def return_json(row: Return, v2_order: V2Order | None = None) -> dict[str, Any]:
    """A return as v2 shows it (our choice of shape: the contract names only the calls)."""
    v2 = v2_order if v2_order is not None else _v2_order(row)
    line_ids = {line["mp_line_number"]: line["id"] for line in v2.lines} if v2 else {}
    placed = row.placed
    return {
        "id": str(row.id),
        "order_id": str(v2.id) if v2 else None,
        "marketplace_order_number": row.order.mp_order_number,
        "mp_return_number": row.mp_return_number,
        "status": row.status,
        "rma": row.rma or None,
        "notes": row.notes if row.status == Return.REJECTED else None,
        "return_type": placed.get("return_type"),
        "request_date": placed.get("request_date"),
        "respond_date": placed.get("respond_date"),
        "customer_email": placed.get("customer_email"),
        "shipping_address": placed.get("shipping_address"),
        "return_lines": [
            {
                "mp_return_line_number": line["mp_return_line_number"],
                "feedamp_order_line_id": line_ids.get(line["mp_order_line_number"]),
                "mp_order_line_number": line["mp_order_line_number"],
                "sku": line["sku"],
                "product_name": line.get("product_name"),
                "quantity": line["quantity"],
                "currency": line["currency"],
                "unit_price": money_number(line["unit_price"]),
                "tax": money_number(line["tax"]),
                "requested_refund_principal": money_number(line["requested_refund_principal"]),
                "requested_refund_tax": money_number(line["requested_refund_tax"]),
                "reason": line.get("reason"),
                "preauthorized": line["preauthorized"],
                "carrier": line.get("carrier"),
                "tracking_number": line.get("tracking_number"),
            }
            for line in placed["return_lines"]
        ],
        "refund_lines": [
            {
                "mp_return_line_number": line["mp_return_line_number"],
                "principal_refund_amount": money_number(line["principal_refund_amount"]),
                "shipping_refund_amount": money_number(line["shipping_refund_amount"]),
            }
            for line in row.refund_lines
        ],
        "created_date": rfc3339(row.created_at),
        "updated_date": rfc3339(row.updated_at),
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


def refund_lines_parse(row: Return, raw: object) -> list[dict[str, str]]:
    """``[{"mp_return_line_number", "principal_refund_amount", "shipping_refund_amount"}]``:
    lines of this return, each once; amounts non-negative decimals (not judged)."""
    if not isinstance(raw, list) or not raw:
        raise PackageError(400, "lines must be a non-empty list", {"lines": "a non-empty list"})
    numbers = {str(line["mp_return_line_number"]) for line in row.placed["return_lines"]}
    problems = Problems()
    parsed, seen = [], set()
    for index, item in enumerate(raw):
        path = f"lines[{index}]"
        if not isinstance(item, dict):
            problems.add(path, "must be an object")
            continue
        for key in sorted(set(item) - REFUND_LINE_KEYS):
            problems.add(f"{path}.{key}", "unknown field")
        number = item.get("mp_return_line_number")
        if not isinstance(number, str) or number not in numbers:
            problems.add(f"{path}.mp_return_line_number", f"the return has no line {number!r}")
        elif number in seen:
            problems.add(f"{path}.mp_return_line_number", "given twice")
        seen.add(number)
        for key in ("principal_refund_amount", "shipping_refund_amount"):
            _money(problems, item, key, f"{path}.{key}", required=True)
        if not problems:
            parsed.append(
                {
                    "mp_return_line_number": number,
                    "principal_refund_amount": money_text(item["principal_refund_amount"]),
                    "shipping_refund_amount": money_text(item["shipping_refund_amount"]),
                }
            )
    if problems:
        message = "invalid lines: " + "; ".join(f"{k}: {v}" for k, v in problems.items())
        raise PackageError(400, message, dict(problems))
    return parsed


def body_check(op: str, body: dict) -> None:
    unknown = sorted(set(body) - OPERATION_KEYS[op])
    if unknown:
        raise PackageError(
            400, f"unknown fields: {', '.join(unknown)}", {key: "unknown field" for key in unknown}
        )


def run_operation(row: Return, op: str, body: dict, *, source: str = "v2 API") -> Return:
    """Run ``op`` with its body on the return (locked), or raise ``PackageError``."""
    if op not in OPERATIONS:
        raise PackageError(400, f"op must be one of {', '.join(OPERATIONS)}", {"op": "unknown"})
    body_check(op, body)
    with transaction.atomic():
        row = Return.objects.select_for_update().select_related("order").get(id=row.id)
        if op not in allowed_operations(row):
            hint = (
                " (a return with lines not preauthorized is authorized first)"
                if op == "refund" and row.status == Return.AWAITING_AUTHORIZATION
                else ""
            )
            raise PackageError(409, f"cannot {op} a return that is {row.status}{hint}")
        now = clock.now()
        if op == "authorize":
            row.rma = _text_value(body, "rma", max_length=128)
            row.status = Return.AUTHORIZED
            changed(row, now, fields=["rma", "status"], new_state=True)
            detail = f"return {row.mp_return_number} authorized, RMA {row.rma} ({source})"
        elif op == "reject":
            row.notes = _text_value(body, "reason", max_length=2000)
            row.status = Return.REJECTED
            changed(row, now, fields=["notes", "status"], new_state=True)
            detail = f"return {row.mp_return_number} rejected: {row.notes} ({source})"
        else:
            row.refund_lines = refund_lines_parse(row, body.get("lines"))
            row.status = Return.REFUNDED
            changed(row, now, fields=["refund_lines", "status"], new_state=True)
            detail = f"return {row.mp_return_number} refunded ({source})"
        v2 = _v2_order(row)
        if v2 is not None:
            event_add(v2, f"return_{'refunded' if op == 'refund' else op + 'd'}", detail, now)
    return row
