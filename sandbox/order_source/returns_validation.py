"""Validation of return bodies (``PUT /orders/{n}/returns/{r}``) and of the error arrays a
marketplace reports on returns and refunds (returns-refunds-contract.md).

Read as strictly as the order bodies' values, and stricter about names: a field the
contract does not name is a 400 naming it (the marketplace builds these bodies from the
contract alone). Problems are collected per path (``return_lines[0].quantity``).
"""

import re
from datetime import date
from typing import Any

from sandbox.common.body_checks import Problems, decimal_of, money_field, text_field
from sandbox.common.iso_codes import CURRENCIES
from sandbox.order_source.validation import shipping_address_check

# A pure module (no models): the app's tests import this one (tests/test_invariants.py).
from sandbox.records.orders.contract_fields import RETURN_LINE_KEYS

RETURN_FIELDS = frozenset(
    {
        "mp_order_number",
        "return_lines",
        "request_date",
        "respond_date",
        "shipping_address",
        "customer_email",
        "return_type",
    }
)
RETURN_LINE_OPTIONAL = ("carrier", "tracking_number")
RETURN_LINE_FIELDS = frozenset(RETURN_LINE_KEYS)
# The reference: SHIP or NO_RETURN here (IN_STORE is valid on v2 only, so a 400).
RETURN_TYPES = ("SHIP", "NO_RETURN")
# The codes each errors endpoint takes (the contract's "which code" reading: EXCESS_REFUND on
# a return, EXCESS_ITEM_REFUND on a refund).
RETURN_ERROR_CODES = (
    "EXCESS_REFUND",
    "EXCESS_QUANTITY",
    "UNKNOWN_LINE",
    "CURRENCY_MISMATCH",
    "OTHER",
)
REFUND_ERROR_CODES = (
    "EXCESS_ITEM_REFUND",
    "EXCESS_QUANTITY",
    "UNKNOWN_LINE",
    "CURRENCY_MISMATCH",
    "OTHER",
)
_PLAIN_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _unknown(problems: Problems, data: dict, allowed: frozenset[str], prefix: str) -> None:
    for key in sorted(set(data) - allowed):
        problems.add(f"{prefix}{key}", "unknown field")


def _plain_date(problems: Problems, body: dict, key: str) -> None:
    value = body.get(key)
    if value is None:
        return
    if not isinstance(value, str) or not _PLAIN_DATE.match(value):
        problems.add(key, "must be a date YYYY-MM-DD")
        return
    try:
        date.fromisoformat(value)
    except ValueError:
        problems.add(key, "must be a date YYYY-MM-DD")


def _return_line(problems: Problems, line: Any, path: str, seen: set[str]) -> None:
    if not isinstance(line, dict):
        problems.add(path, "must be an object")
        return
    _unknown(problems, line, RETURN_LINE_FIELDS, f"{path}.")
    number = text_field(
        problems,
        line,
        "mp_return_line_number",
        f"{path}.mp_return_line_number",
        required=True,
        max_length=128,
    )
    if number is not None:
        if number in seen:
            problems.add(f"{path}.mp_return_line_number", "duplicate line number")
        seen.add(number)
    text_field(
        problems,
        line,
        "mp_order_line_number",
        f"{path}.mp_order_line_number",
        required=True,
        max_length=128,
    )
    text_field(problems, line, "sku", f"{path}.sku", required=True)
    text_field(
        problems, line, "product_name", f"{path}.product_name", required=True, max_length=1000
    )
    text_field(problems, line, "reason", f"{path}.reason", required=True, max_length=2000)
    for key in RETURN_LINE_OPTIONAL:
        text_field(problems, line, key, f"{path}.{key}", required=False)
    quantity = line.get("quantity")
    if quantity is None:
        problems.add(f"{path}.quantity", "required")
    elif isinstance(quantity, bool) or not isinstance(quantity, int):
        problems.add(f"{path}.quantity", "must be an integer")
    elif quantity < 1:
        problems.add(f"{path}.quantity", "must be at least 1")
    currency = line.get("currency")
    if currency is None:
        problems.add(f"{path}.currency", "required")
    elif not isinstance(currency, str) or currency not in CURRENCIES:
        problems.add(f"{path}.currency", "must be an ISO 4217 currency code")
    for key in ("requested_refund_principal", "requested_refund_tax", "unit_price", "tax"):
        money_field(problems, line, key, f"{path}.{key}", required=True)
    preauthorized = line.get("preauthorized")
    if preauthorized is None:
        problems.add(f"{path}.preauthorized", "required")
    elif not isinstance(preauthorized, bool):
        problems.add(f"{path}.preauthorized", "must be true or false")


def return_problems(body: Any) -> Problems:
    """Problems of the body's shape alone (the order's lines are checked after)."""
    problems = Problems()
    if not isinstance(body, dict):
        problems.add("", "the body must be a JSON object")
        return problems
    _unknown(problems, body, RETURN_FIELDS, "")
    text_field(problems, body, "mp_order_number", "mp_order_number", required=False, max_length=128)
    lines = body.get("return_lines")
    if lines is None:
        problems.add("return_lines", "required")
    elif not isinstance(lines, list):
        problems.add("return_lines", "must be a list")
    elif not lines:
        problems.add("return_lines", "must have at least one line")
    else:
        seen: set[str] = set()
        for index, line in enumerate(lines):
            _return_line(problems, line, f"return_lines[{index}]", seen)
    _plain_date(problems, body, "request_date")
    _plain_date(problems, body, "respond_date")
    if body.get("shipping_address") is not None:
        shipping_address_check(problems, body)
    email = text_field(problems, body, "customer_email", "customer_email", required=False)
    if email is not None and not _EMAIL.match(email):
        problems.add("customer_email", "not an e-mail address")
    return_type = body.get("return_type")
    if return_type is not None and return_type not in RETURN_TYPES:
        problems.add("return_type", f"must be one of {', '.join(RETURN_TYPES)}")
    return problems


def lines_against_order(
    body: dict, placed: dict, shipped: dict[str, int], returned_before: dict[str, int]
) -> Problems:
    """Each line names a line of the order with its sku, currency and unit price, and no
    order line returns more than was shipped less what earlier returns took."""
    problems = Problems()
    order_lines = {
        str(line.get("mp_line_number")): line
        for line in placed.get("order_lines", [])
        if isinstance(line, dict)
    }
    asked: dict[str, int] = {}
    first_path: dict[str, str] = {}
    for index, line in enumerate(body["return_lines"]):
        path = f"return_lines[{index}]"
        number = line["mp_order_line_number"]
        order_line = order_lines.get(number)
        if order_line is None:
            problems.add(f"{path}.mp_order_line_number", f"the order has no line {number!r}")
            continue
        if line["sku"] != order_line.get("sku"):
            problems.add(f"{path}.sku", f"must be the order line's sku {order_line.get('sku')!r}")
        if line["currency"] != placed.get("currency"):
            problems.add(f"{path}.currency", f"must be the order's {placed.get('currency')}")
        if decimal_of(line["unit_price"]) != decimal_of(order_line.get("unit_price")):
            problems.add(
                f"{path}.unit_price",
                f"must be the order line's unit_price {order_line.get('unit_price')}",
            )
        asked[number] = asked.get(number, 0) + line["quantity"]
        first_path.setdefault(number, path)
    for number, quantity in asked.items():
        left = shipped.get(number, 0) - returned_before.get(number, 0)
        if quantity > left:
            problems.add(
                f"{first_path[number]}.quantity",
                f"line {number}: {quantity} to return, {max(left, 0)} shipped and not returned",
            )
    return problems


def error_array_problems(
    body: Any, codes: tuple[str, ...], *, line_key: str | None, line_numbers: set[str]
) -> Problems:
    """A JSON array of ``{"code", "message"}`` (plus ``line_key`` when given), nothing else."""
    problems = Problems()
    if not isinstance(body, list):
        problems.add("", "the body must be a JSON array of errors")
        return problems
    if not body:
        problems.add("", "the array must hold at least one error")
    allowed = frozenset({"code", "message"} | ({line_key} if line_key else set()))
    for index, item in enumerate(body):
        path = f"[{index}]"
        if not isinstance(item, dict):
            problems.add(path, "must be an object")
            continue
        _unknown(problems, item, allowed, f"{path}.")
        code = item.get("code")
        if code is None:
            problems.add(f"{path}.code", "required")
        elif code not in codes:
            problems.add(f"{path}.code", f"must be one of {', '.join(codes)}")
        text_field(problems, item, "message", f"{path}.message", required=True, max_length=2000)
        if line_key:
            number = text_field(
                problems, item, line_key, f"{path}.{line_key}", required=False, max_length=128
            )
            if number is not None and number not in line_numbers:
                problems.add(f"{path}.{line_key}", f"the return has no line {number!r}")
    return problems


def error_items(body: list[dict], *, line_key: str | None) -> list[dict]:
    """The reported errors as stored (the line key null when not given)."""
    items = []
    for item in body:
        stored = {"code": item["code"], "message": item["message"]}
        if line_key:
            stored[line_key] = item.get(line_key)
        items.append(stored)
    return items
