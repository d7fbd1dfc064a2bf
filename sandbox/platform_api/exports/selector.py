"""``export_selector``: which rows an export writes. The contract names ``true`` (every
row); the rest is our choice, a small language (README):

    true | false | <condition> [AND <condition>]...
    condition: <field> <op> <value>, op one of = != > >= < <= contains
    value: a number, a bare word, or "a quoted string" ("" is the empty value)

Words are separated by spaces. ``> >= < <=`` compare as numbers when both sides are
numbers, else as text; ``contains`` ignores case.
"""

import shlex
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

OPERATORS = ("=", "!=", ">", ">=", "<", "<=", "contains")
Predicate = Callable[[dict[str, str]], bool]


class SelectorError(ValueError):
    pass


def _number(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _compare(op: str, left: str, right: str) -> bool:
    if op == "contains":
        return right.casefold() in left.casefold()
    a, b = _number(left), _number(right)
    pair: tuple = (a, b) if a is not None and b is not None else (left, right)
    return {
        "=": pair[0] == pair[1],
        "!=": pair[0] != pair[1],
        ">": pair[0] > pair[1],
        ">=": pair[0] >= pair[1],
        "<": pair[0] < pair[1],
        "<=": pair[0] <= pair[1],
    }[op]


def selector_parse(text: str, fields: list[str]) -> Predicate:
    """A predicate over rows, or SelectorError saying what is wrong."""
    stripped = text.strip()
    if stripped.lower() in ("", "true"):
        return lambda row: True
    if stripped.lower() == "false":
        return lambda row: False
    try:
        words = shlex.split(stripped)
    except ValueError as exc:
        raise SelectorError(str(exc)) from exc
    conditions: list[tuple[str, str, str]] = []
    while words:
        if len(words) < 3:
            raise SelectorError("a condition is <field> <operator> <value>")
        field, op, value, *words = words
        if field not in fields:
            raise SelectorError(f"unknown field {field!r}")
        if op not in OPERATORS:
            raise SelectorError(f"operator must be one of {' '.join(OPERATORS)}")
        conditions.append((field, op, value))
        if words:
            if words[0].upper() != "AND" or len(words) == 1:
                raise SelectorError("conditions are joined by AND")
            words = words[1:]
    return lambda row: all(_compare(op, row.get(f, ""), v) for f, op, v in conditions)
