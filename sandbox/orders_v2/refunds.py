"""Seller refunds through v2: ``POST /orders/{id}/refunds`` and the control API and page
forms that post the same. The rows are the marketplace-facing room's ``Refund`` (v1 lists
them in ``GET /refunds``). Over-refunds are accepted: the platform does not check them."""

import re
from typing import Any

from django.db import transaction

from sandbox.common import clock
from sandbox.common.body_checks import Problems, money_field, text_field
from sandbox.common.iso_codes import CURRENCIES
from sandbox.orders_v2.imports import event_add
from sandbox.orders_v2.models import V2Order
from sandbox.orders_v2.packages import PackageError
from sandbox.records.orders.after_sale import REFUND_AMOUNTS, money_number, money_text
from sandbox.records.orders.models import Refund

_REASON = re.compile(r"^[a-z][a-z0-9_]*$")
REFUND_KEYS = frozenset({"cp_refund_number", "refund_lines"})
LINE_KEYS = frozenset(
    {"feedamp_order_line_id", "refund_reason", "refund_quantity", "currency", "refund_notes"}
    | set(REFUND_AMOUNTS)
)


def refund_parse(order: V2Order, body: Any) -> tuple[str, list[dict[str, Any]]]:
    """(cp_refund_number, lines as stored) of a v2 refund body, or ``PackageError`` 400."""
    if not isinstance(body, dict):
        raise PackageError(400, "the body must be a JSON object", {"": "a JSON object"})
    problems = Problems()
    for key in sorted(set(body) - REFUND_KEYS):
        problems.add(key, "unknown field")
    number = text_field(problems, body, "cp_refund_number", "cp_refund_number", required=False)
    raw = body.get("refund_lines")
    lines: list[dict[str, Any]] = []
    by_id = {line["id"]: line for line in order.lines}
    if not isinstance(raw, list) or not raw:
        problems.add("refund_lines", "required, a non-empty list")
        raw = []
    for index, item in enumerate(raw):
        path = f"refund_lines[{index}]"
        if not isinstance(item, dict):
            problems.add(path, "must be an object")
            continue
        for key in sorted(set(item) - LINE_KEYS):
            problems.add(f"{path}.{key}", "unknown field")
        line = by_id.get(str(item.get("feedamp_order_line_id")))
        if line is None:
            problems.add(
                f"{path}.feedamp_order_line_id",
                f"the order has no line {item.get('feedamp_order_line_id')!r}",
            )
        reason = text_field(problems, item, "refund_reason", f"{path}.refund_reason", required=True)
        if reason is not None and not _REASON.match(reason):
            # v2 writes reasons in lower case (``customer_cancelled``); v1 shows them upper.
            problems.add(f"{path}.refund_reason", "lower case letters and _ (customer_cancelled)")
        text_field(
            problems, item, "refund_notes", f"{path}.refund_notes", required=False, max_length=2000
        )
        quantity = item.get("refund_quantity")
        if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 0:
            problems.add(f"{path}.refund_quantity", "required, an integer >= 0")
        currency = item.get("currency")
        if not isinstance(currency, str) or currency not in CURRENCIES:
            problems.add(f"{path}.currency", "required, an ISO 4217 currency code")
        for key in REFUND_AMOUNTS:
            money_field(problems, item, key, f"{path}.{key}", required=True)
        if not problems and line is not None:
            lines.append(
                {
                    "refund_line_number": index + 1,
                    "feedamp_order_line_id": line["id"],
                    "mp_line_number": line["mp_line_number"],
                    "refund_reason": item["refund_reason"],
                    "refund_quantity": quantity,
                    "currency": currency,
                    **{key: money_text(item[key]) for key in REFUND_AMOUNTS},
                    "refund_notes": item.get("refund_notes"),
                }
            )
    if problems:
        message = "the refund is invalid: " + "; ".join(f"{k}: {v}" for k, v in problems.items())
        raise PackageError(400, message, dict(problems))
    return number or "", lines


def refund_create(order: V2Order, body: Any, *, source: str = "v2 API") -> Refund:
    number, lines = refund_parse(order, body)
    now = clock.now()
    with transaction.atomic():
        row = Refund.objects.create(
            order=order.order, cp_refund_number=number, lines=lines, created_at=now, updated_at=now
        )
        event_add(order, "refund_posted", f"refund {row.id} ({source})", now)
    return row


def refund_json(row: Refund) -> dict[str, Any]:
    """What v2 answers: the body as posted plus ``id`` and each ``refund_line_number``."""
    return {
        "id": str(row.id),
        "cp_refund_number": row.cp_refund_number or None,
        "refund_lines": [
            {
                "refund_line_number": line["refund_line_number"],
                "feedamp_order_line_id": line["feedamp_order_line_id"],
                "refund_reason": line["refund_reason"],
                "refund_quantity": line["refund_quantity"],
                "currency": line["currency"],
                **{key: money_number(line[key]) for key in REFUND_AMOUNTS},
                "refund_notes": line.get("refund_notes"),
            }
            for line in row.lines
        ],
    }
