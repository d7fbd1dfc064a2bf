"""Validation of order bodies (PUT /orders/{n}) and error reports (POST .../errors).

Problems are collected per field path (``order_lines[0].quantity``) so a client sees all
of them at once: ``{"error": "validation_error", "message": ..., "fields": {...}}``.

Our choices where the contract is silent (see README): customer.full_name and email
required, phone and vat optional; shipping_address full_name, address1, city,
postal_code and country_code required; order line mp_line_number, sku, quantity and
unit_price required; money is a JSON number or a decimal string, never negative.
Unknown extra fields are tolerated (the interface grows additively).
"""

import re
from datetime import datetime
from typing import Any

from sandbox.common.body_checks import Problems, decimal_field, text_field
from sandbox.common.iso_codes import COUNTRIES_ALPHA3, CURRENCIES
from sandbox.common.wire_dates import sent_datetime

MARKETPLACE_STATES = ("PENDING", "AWAITING_SHIPMENT", "SHIPPED", "CANCELLED")
TERMINAL_STATES = ("SHIPPED", "CANCELLED")
ADDRESS_TYPES = ("residential", "business")
ERROR_CODES = (
    "INVALID_TRACKING_NUMBER",
    "UNKNOWN_CARRIER",
    "EXCESS_QUANTITY",
    "UNKNOWN_LINE",
    "INVALID_SHIP_DATE",
    "OTHER",
)
MUTABLE_ON_UPDATE = (
    "marketplace_state",
    "earliest_ship_date",
    "latest_ship_date",
    "earliest_delivery_date",
    "latest_delivery_date",
    "delivery_notes",
)
DATE_WINDOWS = (
    ("earliest_ship_date", "latest_ship_date"),
    ("earliest_delivery_date", "latest_delivery_date"),
)

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def parse_datetime(value: Any) -> datetime | None:
    """An RFC 3339 date-time with an offset (``Z`` or ``±hh:mm``), else None."""
    if not isinstance(value, str) or not _RFC3339.match(value):
        return None
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    # Python's parser takes at most microseconds.
    text = re.sub(r"\.(\d{6})\d+", r".\1", text)
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _object(problems: Problems, data: dict, key: str, path: str, *, required: bool) -> dict | None:
    value = data.get(key)
    if value is None:
        if required:
            problems.add(path, "required")
        return None
    if not isinstance(value, dict):
        problems.add(path, "must be an object")
        return None
    return value


def _datetime_field(problems: Problems, data: dict, key: str, *, required: bool) -> datetime | None:
    value = data.get(key)
    if value is None:
        if required:
            problems.add(key, "required")
        return None
    sent = sent_datetime(value)
    if sent.problem:
        problems.add(key, sent.problem)
    return sent.moment


def dates_off_wire(body: Any) -> list[str]:
    """The order's date-time fields sent in another form than ``YYYY-MM-DDTHH:MM:SSZ``
    (refused under reading A, taken under B: counted as violations either way)."""
    if not isinstance(body, dict):
        return []
    keys = ("purchase_date", *(key for pair in DATE_WINDOWS for key in pair))
    return [key for key in keys if key in body and not sent_datetime(body[key]).exact]


def _customer(problems: Problems, body: dict) -> None:
    customer = _object(problems, body, "customer", "customer", required=True)
    if customer is None:
        return
    text_field(problems, customer, "full_name", "customer.full_name", required=True)
    email = text_field(problems, customer, "email", "customer.email", required=True)
    if email and not _EMAIL.match(email):
        problems.add("customer.email", "not an e-mail address")
    text_field(problems, customer, "phone", "customer.phone", required=False, max_length=64)
    text_field(problems, customer, "vat", "customer.vat", required=False, max_length=64)


def shipping_address_check(problems: Problems, body: dict) -> None:
    address = _object(problems, body, "shipping_address", "shipping_address", required=True)
    if address is None:
        return
    for key in ("full_name", "address1", "city", "postal_code"):
        text_field(problems, address, key, f"shipping_address.{key}", required=True)
    for key in ("address2", "address3", "state", "phone"):
        text_field(problems, address, key, f"shipping_address.{key}", required=False)
    country = text_field(
        problems, address, "country_code", "shipping_address.country_code", required=True
    )
    if country and country not in COUNTRIES_ALPHA3:
        problems.add("shipping_address.country_code", "must be an ISO 3166-1 alpha-3 code")
    iso2 = text_field(
        problems, address, "country_code_iso2", "shipping_address.country_code_iso2", required=False
    )
    if iso2 is not None and not re.fullmatch(r"[A-Z]{2}", iso2):
        problems.add("shipping_address.country_code_iso2", "must be an ISO 3166-1 alpha-2 code")
    address_type = address.get("address_type")
    if address_type is not None and address_type not in ADDRESS_TYPES:
        problems.add("shipping_address.address_type", "must be residential or business")


def _order_line(problems: Problems, line: Any, path: str, seen: set[str]) -> None:
    if not isinstance(line, dict):
        problems.add(path, "must be an object")
        return
    number = text_field(
        problems, line, "mp_line_number", f"{path}.mp_line_number", required=True, max_length=128
    )
    if number is not None:
        if number in seen:
            problems.add(f"{path}.mp_line_number", "duplicate line number")
        seen.add(number)
    text_field(problems, line, "sku", f"{path}.sku", required=True)
    text_field(
        problems, line, "product_name", f"{path}.product_name", required=False, max_length=1000
    )
    text_field(problems, line, "shipping_method", f"{path}.shipping_method", required=False)
    quantity = line.get("quantity")
    if quantity is None:
        problems.add(f"{path}.quantity", "required")
    elif isinstance(quantity, bool) or not isinstance(quantity, int):
        problems.add(f"{path}.quantity", "must be an integer")
    elif quantity < 1:
        problems.add(f"{path}.quantity", "must be at least 1")
    decimal_field(problems, line, "unit_price", f"{path}.unit_price", required=True)
    decimal_field(problems, line, "shipping_price", f"{path}.shipping_price", required=False)
    for list_key, keys in (("taxes", ("type",)), ("discounts", ("name", "type"))):
        items = line.get(list_key)
        if items is None:
            continue
        if not isinstance(items, list):
            problems.add(f"{path}.{list_key}", "must be a list")
            continue
        for index, item in enumerate(items):
            item_path = f"{path}.{list_key}[{index}]"
            if not isinstance(item, dict):
                problems.add(item_path, "must be an object")
                continue
            for key in keys:
                text_field(problems, item, key, f"{item_path}.{key}", required=True)
            decimal_field(problems, item, "amount", f"{item_path}.amount", required=True)


def order_problems(body: Any, *, path_number: str) -> Problems:
    problems = Problems()
    if not isinstance(body, dict):
        problems.add("", "the body must be a JSON object")
        return problems
    number = text_field(
        problems, body, "mp_order_number", "mp_order_number", required=True, max_length=128
    )
    if number is not None and number != path_number:
        problems.add("mp_order_number", "must match the order number in the path")
    text_field(problems, body, "sales_channel", "sales_channel", required=True)
    _customer(problems, body)
    _datetime_field(problems, body, "purchase_date", required=True)
    currency = body.get("currency")
    if currency is None:
        problems.add("currency", "required")
    elif not isinstance(currency, str) or currency not in CURRENCIES:
        problems.add("currency", "must be an ISO 4217 currency code")
    shipping_address_check(problems, body)
    lines = body.get("order_lines")
    if lines is None:
        problems.add("order_lines", "required")
    elif not isinstance(lines, list):
        problems.add("order_lines", "must be a list")
    elif not lines:
        problems.add("order_lines", "must have at least one line")
    else:
        seen: set[str] = set()
        for index, line in enumerate(lines):
            _order_line(problems, line, f"order_lines[{index}]", seen)
    state = body.get("marketplace_state")
    if state is None:
        problems.add("marketplace_state", "required")
    elif state not in MARKETPLACE_STATES:
        problems.add("marketplace_state", f"must be one of {', '.join(MARKETPLACE_STATES)}")
    location = body.get("location")
    if location is not None and not isinstance(location, str | dict):
        problems.add("location", "must be a string or an object")
    text_field(problems, body, "delivery_notes", "delivery_notes", required=False, max_length=2000)
    for earliest_key, latest_key in DATE_WINDOWS:
        earliest = _datetime_field(problems, body, earliest_key, required=False)
        latest = _datetime_field(problems, body, latest_key, required=False)
        if earliest and latest and earliest > latest:
            problems.add(latest_key, f"must not be before {earliest_key}")
    return problems


def changed_paths(old: Any, new: Any, path: str = "") -> list[str]:
    """Field paths whose values differ between the placed order and an update."""
    if isinstance(old, dict) and isinstance(new, dict):
        paths: list[str] = []
        for key in sorted(set(old) | set(new)):
            if not path and key in MUTABLE_ON_UPDATE:
                continue
            child = f"{path}.{key}" if path else key
            paths += changed_paths(old.get(key), new.get(key), child)
        return paths
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        paths = []
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            paths += changed_paths(a, b, f"{path}[{index}]")
        return paths
    return [] if old == new else [path]


def transition_problem(old_state: str, new_state: str) -> str | None:
    if old_state == new_state:
        return None
    if old_state in TERMINAL_STATES:
        return f"cannot change from {old_state} to {new_state}"
    if old_state == "AWAITING_SHIPMENT" and new_state == "PENDING":
        return "cannot go back from AWAITING_SHIPMENT to PENDING"
    return None


def error_report_problems(body: Any) -> Problems:
    problems = Problems()
    if not isinstance(body, list):
        problems.add("", "the body must be a JSON array of errors")
        return problems
    if not body:
        problems.add("", "the array must hold at least one error")
    for index, item in enumerate(body):
        path = f"[{index}]"
        if not isinstance(item, dict):
            problems.add(path, "must be an object")
            continue
        code = item.get("code")
        if code is None:
            problems.add(f"{path}.code", "required")
        elif code not in ERROR_CODES:
            problems.add(f"{path}.code", f"must be one of {', '.join(ERROR_CODES)}")
        text_field(problems, item, "message", f"{path}.message", required=True, max_length=2000)
        text_field(
            problems,
            item,
            "mp_line_number",
            f"{path}.mp_line_number",
            required=False,
            max_length=128,
        )
        debug = item.get("debug")
        if debug is not None and not (
            isinstance(debug, list) and all(isinstance(d, dict) for d in debug)
        ):
            problems.add(f"{path}.debug", "must be a list of objects")
    return problems
