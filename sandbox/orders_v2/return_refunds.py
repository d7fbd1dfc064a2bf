"""The seller refunds a return: ``POST /returns/{return_id}/refunds`` (the reference's "Apply
a refund on a return") with ``{"merchant_refund_lines": [{"feedamp_return_line_id",
"item_refund", "shipping_refund", "refund_notes", "merchant_full_refund"}]}``: this sets the
return's refund amounts and moves it to ``REFUNDED``.

Readings (our choice where the reference is silent): each line of this return at most once;
``item_refund`` (item and its tax: v1's ``principal_refund_amount``) is required unless
``merchant_full_refund`` is true, which refunds what the buyer asked (requested principal +
tax); ``shipping_refund`` defaults to 0. Amounts are not judged (the platform accepts
over-refunds; the marketplace reports them). Allowed from ``AUTHORIZED``, or from
``AWAITING_AUTHORIZATION`` when every line is preauthorized; once (409 otherwise).
"""

from typing import Any

from django.db import transaction

from sandbox.common import clock
from sandbox.common.body_checks import Problems, decimal_of, money_field, text_field
from sandbox.orders_v2.packages import PackageError
from sandbox.orders_v2.returns import refundable, return_event, return_line_id
from sandbox.records.orders.after_sale import changed, money_text
from sandbox.records.orders.models import Return

BODY_KEYS = frozenset({"merchant_refund_lines"})
LINE_KEYS = frozenset(
    {
        "feedamp_return_line_id",
        "item_refund",
        "shipping_refund",
        "refund_notes",
        "merchant_full_refund",
    }
)


def _line(
    problems: Problems, item: Any, path: str, by_id: dict[str, dict], seen: set[str]
) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        problems.add(path, "must be an object")
        return None
    for key in sorted(set(item) - LINE_KEYS):
        problems.add(f"{path}.{key}", "unknown field")
    line_id = item.get("feedamp_return_line_id")
    line = by_id.get(str(line_id)) if isinstance(line_id, str | int) else None
    if line is None:
        problems.add(f"{path}.feedamp_return_line_id", f"the return has no line {line_id!r}")
    elif str(line_id) in seen:
        problems.add(f"{path}.feedamp_return_line_id", "given twice")
    seen.add(str(line_id))
    full = item.get("merchant_full_refund", False)
    if not isinstance(full, bool):
        problems.add(f"{path}.merchant_full_refund", "must be true or false")
    money_field(problems, item, "item_refund", f"{path}.item_refund", required=full is not True)
    money_field(problems, item, "shipping_refund", f"{path}.shipping_refund", required=False)
    text_field(
        problems, item, "refund_notes", f"{path}.refund_notes", required=False, max_length=2000
    )
    if problems or line is None:
        return None
    item_refund = item.get("item_refund")
    if item_refund is None:  # a full refund of what the buyer asked
        item_refund = decimal_of(line["requested_refund_principal"]) + decimal_of(
            line["requested_refund_tax"]
        )
    return {
        "mp_return_line_number": line["mp_return_line_number"],
        "principal_refund_amount": money_text(item_refund),
        "shipping_refund_amount": money_text(item.get("shipping_refund") or 0),
        "refund_notes": item.get("refund_notes"),
        "merchant_full_refund": full,
    }


def refund_lines_parse(row: Return, body: Any) -> list[dict[str, Any]]:
    """The lines as stored on the return, or ``PackageError`` 400 naming each problem."""
    if not isinstance(body, dict):
        raise PackageError(400, "the body must be a JSON object", {"": "a JSON object"})
    problems = Problems()
    for key in sorted(set(body) - BODY_KEYS):
        problems.add(key, "unknown field")
    raw = body.get("merchant_refund_lines")
    if not isinstance(raw, list) or not raw:
        problems.add("merchant_refund_lines", "required, a non-empty list")
        raw = []
    by_id = {
        return_line_id(row, index): line for index, line in enumerate(row.placed["return_lines"])
    }
    seen: set[str] = set()
    lines = []
    for index, item in enumerate(raw):
        parsed = _line(problems, item, f"merchant_refund_lines[{index}]", by_id, seen)
        if parsed is not None:
            lines.append(parsed)
    if problems:
        message = "invalid refund: " + "; ".join(f"{k}: {v}" for k, v in problems.items())
        raise PackageError(400, message, dict(problems))
    return lines


def return_refund(row: Return, body: Any, *, source: str = "v2 API") -> Return:
    """Refund the return (locked) with the body's lines: ``REFUNDED``, or a PackageError."""
    with transaction.atomic():
        row = Return.objects.select_for_update().select_related("order").get(id=row.id)
        if not refundable(row):
            hint = (
                " (a return with lines not preauthorized is authorized first)"
                if row.status == Return.AWAITING_AUTHORIZATION
                else ""
            )
            raise PackageError(409, f"cannot refund a return that is {row.status}{hint}")
        row.refund_lines = refund_lines_parse(row, body)
        row.status = Return.REFUNDED
        now = clock.now()
        changed(row, now, fields=["refund_lines", "status"], new_state=True)
        return_event(
            row, "return_refunded", f"return {row.mp_return_number} refunded ({source})", now
        )
    return row
