"""Merging a free-form request body into stored settings, the one way exports and imports
do it: closed lists, 0/1 flags, texts, bounded numbers, and per-key readers for the rest.
Every stored value is a string (the Platform API's answers are strings); a bad value is an
``ApiError`` (400) whose message starts with the key. Keys the object does not take are
ignored."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from sandbox.common.api_php.errors import ApiError

# The delimited files' closed lists, shared by exports (writing) and imports (reading).
DELIMITERS = {"comma": ",", "tab": "\t", "pipe": "|", "semicolon": ";"}
ENCODINGS = {
    "UTF-8": "utf-8",
    "UTF-16": "utf-16",
    "ISO-8859-1": "latin-1",
    "Windows-1252": "cp1252",
}

# low, high (None: no limit), decimals allowed
Bounds = tuple[Decimal, Decimal | None, bool]


def scalar(key: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ApiError(f"{key}: must be a string")
    return str(value)


def flag(key: str, value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if value in (0, 1, "0", "1"):
        return str(value)
    raise ApiError(f"{key}: must be 0 or 1")


def number(key: str, value: object, bounds: Bounds) -> str:
    low, high, decimals = bounds
    text = scalar(key, value).strip()
    try:
        parsed = Decimal(text)
    except InvalidOperation:
        parsed = None
    if parsed is None or not parsed.is_finite() or (not decimals and parsed != int(parsed)):
        raise ApiError(f"{key}: must be a {'number' if decimals else 'whole number'}")
    if parsed < low or (high is not None and parsed > high):
        raise ApiError(f"{key}: must be from {low} to {high if high is not None else 'any'}")
    return text


def one_of(key: str, value: object, allowed: tuple[str, ...]) -> str:
    text = scalar(key, value)
    if text not in allowed:
        listed = ", ".join(repr(v) for v in allowed)
        raise ApiError(f"{key}: unknown value {text!r}; one of {listed}")
    return text


@dataclass(frozen=True)
class SettingsShape:
    defaults: Mapping[str, object]
    enums: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    numbers: Mapping[str, Bounds] = field(default_factory=dict)


def settings_merge(
    current: dict,
    body: dict,
    *,
    shape: SettingsShape,
    readers: Mapping[str, Callable[[object], object]] | None = None,
) -> dict:
    """``current`` (over the defaults) with ``body``'s known keys applied; ``readers`` read
    the keys no closed category covers (each raises ``ApiError`` or returns the value)."""
    merged = {**shape.defaults, **current}
    readers = readers or {}
    for key, value in body.items():
        if key in shape.enums:
            merged[key] = one_of(key, value, shape.enums[key])
        elif key in shape.flags:
            merged[key] = flag(key, value)
        elif key in shape.texts:
            merged[key] = scalar(key, value)
        elif key in shape.numbers:
            merged[key] = number(key, value, shape.numbers[key])
        elif key in readers:
            merged[key] = readers[key](value)
    return merged
