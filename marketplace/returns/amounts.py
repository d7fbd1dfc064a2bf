"""Reading an amount of money from the platform, strictly.

Every refund and return amount the platform sends goes through ``parse_amount`` before it
is stored, checked or written to the ledger. It accepts a JSON number (``int``, ``float``
as ``json`` gives it, or a ``Decimal``) or a plain numeric string (``"12.50"``,
``"-3"``), and returns it as a ``Decimal`` in the currency's minor unit. Anything else
raises ``AmountError`` with a problem code (``problems.RefundProblemCode``) and a message
naming the line and the field:

* ``None`` or absent → ``MISSING_AMOUNT`` (never read as zero);
* a bool, a list, ``"12,50"``, ``" 12.50"``, ``"1e3"``, NaN, infinity → ``INVALID_AMOUNT``;
* ``|amount| >= 10^10`` major units (``1e300``, 99 999 999 999) → ``AMOUNT_OUT_OF_RANGE``;
* finer than the currency's minor unit (``23.995`` USD, ``1.5`` JPY) →
  ``AMOUNT_TOO_PRECISE``: never rounded silently;
* below zero (unless ``allow_negative``) → ``NEGATIVE_AMOUNT``.

The minor unit comes from Babel's CLDR data (``get_currency_precision``: JPY 0, USD 2,
KWD 3), not a hand list. A float is read through its shortest text (``repr``), so ``6.99``
is ``Decimal("6.99")``, never the binary float's long expansion. The range keeps every
accepted amount inside the money columns (``MONEY_MAX_DIGITS``/``MONEY_DECIMAL_PLACES``:
10 digits before the point, up to 3 after).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from babel.numbers import get_currency_precision, is_currency

from marketplace.returns.problems import RefundProblemCode

# The money columns of returns, refunds and the ledger: 10 digits before the point, and
# room for the finest common minor unit (3: KWD, BHD, JOD, OMR, TND).
MONEY_DECIMAL_PLACES = 3
MONEY_MAX_DIGITS = 10 + MONEY_DECIMAL_PLACES
AMOUNT_LIMIT = Decimal(10) ** 10  # exclusive, in major units
_NUMERIC_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")


class AmountError(ValueError):
    """An amount that cannot be accepted; ``code`` is a ``RefundProblemCode``."""

    def __init__(self, code: str, message: str, *, label: str = "", field: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.label = label
        self.field = field


def minor_unit(currency: str) -> int:
    """Decimal places of ``currency``'s minor unit (JPY 0, USD 2, KWD 3).

    Raises ``AmountError`` for a code that is not a currency: an amount in it has no
    meaning (and Babel would answer 2 for any unknown code)."""
    if not isinstance(currency, str) or not is_currency(currency):
        raise AmountError(
            RefundProblemCode.CURRENCY_MISMATCH, f"{currency!r} is not a currency code"
        )
    places = get_currency_precision(currency)
    if places > MONEY_DECIMAL_PLACES:
        # CLF (4), UYW (4): units of account no marketplace sells in; our columns hold 3.
        raise AmountError(
            RefundProblemCode.CURRENCY_MISMATCH,
            f"{currency} amounts ({places} decimal places) are not supported",
        )
    return places


def unit(currency: str) -> Decimal:
    """The currency's minor unit as a Decimal exponent template (``Decimal("0.01")``)."""
    return Decimal(1).scaleb(-minor_unit(currency))


def round_to_unit(amount: Decimal, currency: str) -> Decimal:
    """The project's one rounding rule, for amounts *we* compute (a buyer's share of a
    line's discounts and taxes): half up, to the currency's minor unit, once. Amounts the
    platform sends are never rounded: ``parse_amount`` refuses what is finer."""
    return amount.quantize(unit(currency), rounding=ROUND_HALF_UP)


def in_unit(amount: Decimal, currency: str) -> Decimal:
    """An amount we hold (read back from a column with 3 places: ``Decimal("20.000")``)
    written in ``currency``'s unit (``20.00``), for sums, messages and the ledger. Exact
    only: an amount finer than the unit is an error here, never rounded."""
    exact = amount.quantize(unit(currency))
    if exact != amount:
        raise ValueError(f"{amount} is finer than the {currency} minor unit")
    return exact


def _where(label: str, field: str) -> str:
    parts = [f"line {label}" if label else "", field]
    return " ".join(part for part in parts if part) or "amount"


def _as_decimal(value: Any, where: str, label: str, field: str) -> Decimal:
    if value is None:
        raise AmountError(
            RefundProblemCode.MISSING_AMOUNT,
            f"{where}: the amount is missing (null); an amount is required",
            label=label,
            field=field,
        )
    invalid = AmountError(
        RefundProblemCode.INVALID_AMOUNT,
        f"{where}: {_shown(value)} is not a number",
        label=label,
        field=field,
    )
    if isinstance(value, bool):
        raise invalid  # JSON true/false: a bool is an int in Python, not an amount
    if isinstance(value, Decimal):
        amount = value
    elif isinstance(value, int):
        amount = Decimal(value)
    elif isinstance(value, float):
        amount = Decimal(repr(value))  # shortest text: 6.99 -> Decimal("6.99")
    elif isinstance(value, str):
        if not _NUMERIC_TEXT.fullmatch(value):
            raise invalid
        amount = Decimal(value)
    else:
        raise invalid
    if not amount.is_finite():
        raise AmountError(
            RefundProblemCode.INVALID_AMOUNT,
            f"{where}: {_shown(value)} is not a finite number",
            label=label,
            field=field,
        )
    return amount


def _shown(value: Any) -> str:
    """The value as the platform sent it (JSON spelling), cut to a readable length."""
    try:
        text = json.dumps(value, default=str)
    except ValueError:  # NaN / infinity under allow_nan=False would land here
        text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_amount(
    value: Any,
    currency: str,
    *,
    label: str = "",
    field: str = "",
    allow_negative: bool = False,
) -> Decimal:
    """``value`` as a Decimal in ``currency``'s minor unit, or ``AmountError``.

    ``label`` (the line as the platform names it) and ``field`` go into the message:
    ``line 2 item_tax_refund: the amount is missing (null); an amount is required``."""
    where = _where(label, field)
    amount = _as_decimal(value, where, label, field)
    if abs(amount) >= AMOUNT_LIMIT:
        raise AmountError(
            RefundProblemCode.AMOUNT_OUT_OF_RANGE,
            f"{where}: {_shown(value)} is out of range (at most {AMOUNT_LIMIT - 1} {currency})",
            label=label,
            field=field,
        )
    if amount < 0 and not allow_negative:
        raise AmountError(
            RefundProblemCode.NEGATIVE_AMOUNT,
            f"{where}: {_shown(value)} is below zero",
            label=label,
            field=field,
        )
    try:
        step = unit(currency)
    except AmountError as exc:
        raise AmountError(exc.code, f"{where}: {exc.message}", label=label, field=field) from exc
    try:
        exact = amount.quantize(step)
    except InvalidOperation:  # pragma: no cover - the range check keeps this from happening
        exact = None
    if exact is None or exact != amount:
        raise AmountError(
            RefundProblemCode.AMOUNT_TOO_PRECISE,
            f"{where}: {_shown(value)} is finer than the {currency} minor unit ({step})",
            label=label,
            field=field,
        )
    return exact


# The amounts of one line of a seller's refund and of a return's refund (the contract:
# every one required; none is marked optional, so a null tax is missing, not zero).
REFUND_AMOUNT_FIELDS = (
    "item_refund",
    "item_tax_refund",
    "shipping_refund",
    "shipping_tax_refund",
    "discount_refund",
)
RETURN_AMOUNT_FIELDS = ("principal_refund_amount", "shipping_refund_amount")


def line_amounts_read(
    item: Mapping[str, Any], *, fields: tuple[str, ...], currency: str, label: str
) -> tuple[dict[str, Decimal | None], list[AmountError]]:
    """Every amount ``fields`` names in ``item``, strictly: the readable ones as Decimals,
    the others ``None`` with one ``AmountError`` each (all of them, not just the first, so
    the seller fixes the line in one go). An absent field is missing, like null."""
    amounts: dict[str, Decimal | None] = {}
    errors: list[AmountError] = []
    for name in fields:
        try:
            amounts[name] = parse_amount(item.get(name), currency, label=label, field=name)
        except AmountError as exc:
            amounts[name] = None
            errors.append(exc)
    return amounts, errors
