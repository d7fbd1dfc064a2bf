"""The checks every JSON body of the sandbox is read with: problems collected per field
path (``order_lines[0].quantity``) so a client sees all of them at once, text fields,
money as a JSON number or a decimal string.

Shared by the marketplace-facing bodies (``order_source``) and the seller's v2 bodies
(``orders_v2``): one reading of "a string", "money" and "required" for both sides.
"""

import re
from decimal import Decimal, InvalidOperation
from typing import Any

_DECIMAL = re.compile(r"^\d+(\.\d+)?$")
MAX_TEXT = 255
MONEY_MAX = Decimal("1000000000")


class Problems(dict[str, str]):
    """field path -> reason; the first reason for a path wins."""

    def add(self, path: str, reason: str) -> None:
        self.setdefault(path, reason)


def text_field(
    problems: Problems,
    data: dict[str, Any],
    key: str,
    path: str,
    *,
    required: bool,
    max_length: int = MAX_TEXT,
) -> str | None:
    """The string at ``key`` (None when absent or refused, with the reason in ``problems``)."""
    value = data.get(key)
    if value is None:
        if required:
            problems.add(path, "required")
        return None
    if not isinstance(value, str):
        problems.add(path, "must be a string")
        return None
    if required and not value.strip():
        problems.add(path, "must not be empty")
        return None
    if len(value) > max_length:
        problems.add(path, f"at most {max_length} characters")
        return None
    return value


def decimal_field(
    problems: Problems, data: dict[str, Any], key: str, path: str, *, required: bool
) -> None:
    """A JSON number or a decimal string, never negative (the order bodies' money)."""
    value = data.get(key)
    if value is None:
        if required:
            problems.add(path, "required")
        return
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        problems.add(path, "must be a number or a decimal string")
    elif isinstance(value, str) and not _DECIMAL.match(value):
        problems.add(path, "must be a non-negative decimal")
    elif not isinstance(value, str) and value < 0:
        problems.add(path, "must not be negative")


def money_field(
    problems: Problems, data: dict[str, Any], key: str, path: str, *, required: bool
) -> None:
    """Money as the order bodies take it (a JSON number or a decimal string, >= 0), and a
    finite amount below a billion (no ``1e400``, no ``NaN``)."""
    decimal_field(problems, data, key, path, required=required)
    value = data.get(key)
    if value is None or path in problems:
        return
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        problems.add(path, "must be a decimal amount")
        return
    if not amount.is_finite() or amount >= MONEY_MAX:
        problems.add(path, "must be a finite amount below 1000000000")


def decimal_of(value: Any) -> Decimal:
    """A money value already checked (a JSON number or a decimal string) as a Decimal."""
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return Decimal(0)
