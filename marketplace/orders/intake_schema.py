"""The intake body of an order: validated by the API and by ``demo_orders`` alike.

Field names follow the platform's order contract (``customer``, ``shipping_address``,
``order_lines``, ``marketplace_state``) so a back office that knows one knows both.
Unknown fields are refused: a typo must not silently drop data.

The OpenAPI document says exactly what is accepted: every string rule is one regular
expression (``intake_text``), written once and used both as the schema's ``pattern``
and by the validator, and values are taken as sent (no trimming, no case folding).
Rules that span fields or need the database (unique line numbers, date windows, an
existing seller) are in ``cross_field_errors`` and the service, and the schema's
descriptions name them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

import pycountry
from babel.numbers import get_currency_precision
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
)
from pydantic.fields import FieldInfo

from marketplace.text_rules import REFUSED_BMP, REFUSED_RULE, char_refused

CENT = Decimal("0.01")

# Character classes written so that Python's ``re`` and ECMA-262 (the OpenAPI
# document's regex dialect) read them alike: no ``\s``/``\w``, whose meanings differ.
# Refused everywhere: the one character rule (marketplace/text_rules.py).


def _ranges(codepoints: list[int]) -> str:
    """A regex class body for ``codepoints`` as ``\\uXXXX`` escapes (both dialects)."""
    parts: list[str] = []
    start = previous = None
    for codepoint in [*codepoints, None]:
        if codepoint is not None and previous is not None and codepoint == previous + 1:
            previous = codepoint
            continue
        if start is not None:
            parts.append(
                f"\\u{start:04x}" if start == previous else f"\\u{start:04x}-\\u{previous:04x}"
            )
        start = previous = codepoint
    return "".join(parts)


_REFUSED = REFUSED_BMP
# The pattern (and so the document) lists the refused characters of the Basic
# Multilingual Plane; the few format characters above it (U+110BD, U+E0001, tags
# U+E0020-E007F, ...) are refused by the validator too (``_no_refused_astral``), as the
# field descriptions say: ECMA-262 cannot name them without its "u" flag.
CONTROL = _ranges(_REFUSED)
# The same but tab, line feed and carriage return: free text may hold lines.
CONTROL_BUT_LINES = _ranges([c for c in _REFUSED if c not in (0x09, 0x0A, 0x0D)])
# Unicode White_Space outside the refused characters: a value of only these is blank.
BLANK = r" \xa0\u1680\u2000-\u200a\u202f\u205f\u3000"

TEXT_PATTERN = rf"[^{CONTROL}]*"
REQUIRED_TEXT_PATTERN = rf"[^{CONTROL}]*[^{CONTROL}{BLANK}][^{CONTROL}]*"
NOTES_PATTERN = rf"[^{CONTROL_BUT_LINES}]*"
# Order and line numbers become one URL path segment here and at the platform
# (``PUT /orders/{n}``): RFC 3986 unreserved characters only, and a letter or digit
# first, so ``.``/``..`` (dot segments), ``/``, ``\``, ``?``, ``#``, ``%`` and
# whitespace can never change which resource a request names.
SEGMENT_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._~-]*"
_EMAIL_PART = rf"[^@{CONTROL}{BLANK}]+"
EMAIL_PATTERN = rf"{_EMAIL_PART}@{_EMAIL_PART}\.{_EMAIL_PART}"
# Money is a decimal string: exact (a JSON number is a binary float to most clients),
# never negative, at most two decimals, and fits the database's 12 digits. The platform
# payload turns it into a JSON number (payloads.py).
MONEY_PATTERN = r"[0-9]{1,10}(\.[0-9]{1,2})?"

# ISO 4217 also codes things that are not money a buyer pays in; pycountry lists them
# beside the currencies without telling them apart, so they are named here. An order in
# one of them cannot be paid, refunded or settled (and XTS/XXX come from test data or a
# missing value).
NON_CURRENCY_CODES = frozenset(
    {
        # precious metals (one troy ounce)
        "XAU", "XAG", "XPD", "XPT",
        # testing, and "no currency involved"
        "XTS", "XXX",
        # bond-market and other units of account, not currencies of any country
        "XBA", "XBB", "XBC", "XBD", "XDR", "XSU", "XUA", "XAD",
        # funds codes (ISO 4217 "fund" entries: indexed units and same/next-day dollars)
        "BOV", "CHE", "CHW", "CLF", "COU", "MXV", "USN", "USS", "UYI", "UYW",
    }
)  # fmt: skip
CURRENCY_CODES = sorted(
    currency.alpha_3
    for currency in pycountry.currencies
    if currency.alpha_3 not in NON_CURRENCY_CODES
)
COUNTRY_CODES_ALPHA3 = sorted(country.alpha_3 for country in pycountry.countries)
COUNTRY_CODES_ALPHA2 = sorted(country.alpha_2 for country in pycountry.countries)

TEXT_MESSAGE = "must not contain control, format or separator characters"
REQUIRED_TEXT_MESSAGE = "must not be blank or contain control, format or separator characters"
NOTES_MESSAGE = (
    "must not contain control, format or separator characters other than tab and line breaks"
)
SEGMENT_MESSAGE = (
    "must be letters, digits and . _ ~ - only, starting with a letter or digit "
    "(it is used as a URL path segment)"
)
EMAIL_MESSAGE = "must be an e-mail address"
MONEY_MESSAGE = 'must be a decimal string with at most 2 decimals, e.g. "12.50"'


def _refused_astral(value: str) -> bool:
    """A refused character above U+FFFF (the patterns list only the BMP's)."""
    return any(ord(char) > 0xFFFF and char_refused(char) for char in value)


def _matcher(pattern: str, message: str) -> Callable[[str], str]:
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        # fullmatch: "$" in Python also matches before a trailing newline.
        if not compiled.fullmatch(value) or _refused_astral(value):
            raise ValueError(message)
        return value

    return check


def intake_text(
    pattern: str = TEXT_PATTERN,
    message: str = TEXT_MESSAGE,
    *,
    max_length: int,
    min_length: int | None = None,
    description: str | None = None,
) -> tuple[FieldInfo, AfterValidator]:
    """The rules of a string field whose rule is ``pattern``, in the document and in the
    validator: ``Annotated[str, *intake_text(...)]`` (so type checkers see a ``str``).

    Every pattern but the URL segment's refuses the characters of ``REFUSED_RULE``; the
    description says so (the pattern alone cannot name those above U+FFFF)."""
    if pattern != SEGMENT_PATTERN:
        rule = REFUSED_RULE
        if pattern == NOTES_PATTERN:
            rule += " Tab, line feed and carriage return are allowed."
        description = f"{description} {rule}" if description else rule
    return (
        Field(
            min_length=min_length,
            max_length=max_length,
            description=description,
            json_schema_extra={"pattern": f"^{pattern}$"},
        ),
        AfterValidator(_matcher(pattern, message)),
    )


def _one_of(codes: list[str], what: str) -> Callable[[str], str]:
    allowed = frozenset(codes)

    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(f"must be an {what} code")
        return value

    return check


def _code(
    codes: list[str], what: str, description: str = ""
) -> tuple[AfterValidator, WithJsonSchema]:
    """The rules of a code field: ``Annotated[str, *_code(...)]``."""
    return (
        AfterValidator(_one_of(codes, what)),
        WithJsonSchema({"type": "string", "enum": codes, "description": description or what}),
    )


def _money_from_string(value: object) -> object:
    if isinstance(value, Decimal):  # from Python callers only; JSON has no decimals
        return value
    if not isinstance(value, str) or not re.fullmatch(MONEY_PATTERN, value):
        raise ValueError(MONEY_MESSAGE)
    return Decimal(value)


def _date_time_string(value: object) -> object:
    # pydantic would also take a number as a Unix timestamp; the document says string.
    if not isinstance(value, str | datetime):
        raise ValueError("must be an RFC 3339 date-time string with an offset")
    return value


def _whole_number(value: object) -> object:
    # JSON Schema's "integer" is any number with a zero fraction (2.0 too); booleans and
    # strings stay refused (strict).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _in_utc(value: datetime) -> datetime:
    # RFC 3339 allows offsets up to ±23:59; Postgres stores at most ±15:59 and refuses
    # the row (a 500). Stored in UTC, any offset fits, and nothing is lost.
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("is outside the years 1 to 9999 in UTC") from None


RequiredText = Annotated[
    str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=200)
]
Text = Annotated[str, *intake_text(max_length=200)]
Money = Annotated[
    Decimal,
    BeforeValidator(_money_from_string),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": f"^{MONEY_PATTERN}$",
            "description": "decimal string, at most 2 decimals and no finer than the "
            "order currency's minor unit (JPY: whole yen)",
            "examples": ["12.50"],
        }
    ),
]
DateTime = Annotated[
    AwareDatetime,
    BeforeValidator(_date_time_string),
    AfterValidator(_in_utc),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
OrderNumber = Annotated[
    str,
    *intake_text(
        SEGMENT_PATTERN, SEGMENT_MESSAGE, max_length=128, description="One URL path segment"
    ),
]
LineNumber = Annotated[
    str,
    *intake_text(
        SEGMENT_PATTERN,
        SEGMENT_MESSAGE,
        max_length=128,
        description="One URL path segment; unique within the order",
    ),
]
Quantity = Annotated[int, Field(strict=True, ge=1, le=100_000), BeforeValidator(_whole_number)]


# A realistic order for the demo seller (``seller``, products of its demo catalog): the
# OpenAPI document's example body, and docs/examples/order.json (the README's ``-d @``
# file; a test keeps the two equal and valid). Without it Swagger UI would make one up
# from the patterns (random text, a currency of one country with the address of another).
ORDER_EXAMPLE: dict[str, Any] = {
    "mp_order_number": "WEB-100234",
    "seller": "seller",
    "marketplace_state": "PENDING",
    "sales_channel": "EU",
    "purchase_date": "2026-11-20T14:32:00+01:00",
    "currency": "EUR",
    "customer": {
        "full_name": "Grace Hopper",
        "email": "grace.hopper@example.com",
        "phone": "+49 30 1234567",
    },
    "shipping_address": {
        "full_name": "Grace Hopper",
        "address1": "Invalidenstraße 117",
        "city": "Berlin",
        "postal_code": "10115",
        "country_code": "DEU",
        "country_code_iso2": "DE",
        "address_type": "residential",
    },
    "order_lines": [
        {
            "mp_line_number": "1",
            "sku": "DS-000002",
            "product_name": "Lumen Classic Mug 450 ml, Black",
            "quantity": 2,
            "unit_price": "91.26",
            "shipping_method": "standard",
            "shipping_price": "4.90",
            "taxes": [{"type": "VAT", "amount": "29.14"}],
        },
        {
            "mp_line_number": "2",
            "sku": "DS-000005",
            "product_name": "Marlow Classic USB-C Cable 2 m, Navy",
            "quantity": 1,
            "unit_price": "97.10",
            "shipping_method": "standard",
            "shipping_price": "0.00",
            "taxes": [{"type": "VAT", "amount": "13.91"}],
            "discounts": [{"name": "Autumn sale", "amount": "10.00", "type": "promotion"}],
        },
    ],
    "delivery_notes": "Please leave the parcel with the neighbours at number 119.",
    "latest_ship_date": "2026-11-23T18:00:00+01:00",
    "latest_delivery_date": "2026-11-27T18:00:00+01:00",
}
STATE_EXAMPLE: dict[str, Any] = {"state": "AWAITING_SHIPMENT"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CustomerIn(_Strict):
    full_name: RequiredText
    # Required: the platform needs an address to reach the buyer.
    email: Annotated[str, *intake_text(EMAIL_PATTERN, EMAIL_MESSAGE, max_length=254)]
    phone: Annotated[str, *intake_text(max_length=40)] | None = None
    vat: Annotated[str, *intake_text(max_length=40)] | None = None


class AddressIn(_Strict):
    full_name: RequiredText
    address1: RequiredText
    address2: Text | None = None
    address3: Text | None = None
    city: Annotated[str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=100)]
    state: Annotated[str, *intake_text(max_length=100)] | None = None
    postal_code: Annotated[
        str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=20)
    ]
    country_code: Annotated[str, *_code(COUNTRY_CODES_ALPHA3, "ISO 3166-1 alpha-3")]
    country_code_iso2: Annotated[str, *_code(COUNTRY_CODES_ALPHA2, "ISO 3166-1 alpha-2")] | None = (
        None
    )
    address_type: Literal["residential", "business"] | None = None
    phone: Annotated[str, *intake_text(max_length=40)] | None = None


class TaxIn(_Strict):
    type: Annotated[str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=40)]
    amount: Money


class DiscountIn(_Strict):
    name: Annotated[str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=100)]
    amount: Money
    type: Annotated[str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=40)]


class OrderLineIn(_Strict):
    mp_line_number: LineNumber
    sku: Annotated[str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=128)]
    product_name: Annotated[
        str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=300)
    ]
    quantity: Quantity
    unit_price: Money
    shipping_method: Annotated[str, *intake_text(max_length=64)] | None = None
    shipping_price: Money = Decimal("0.00")
    taxes: list[TaxIn] = Field(default_factory=list, max_length=20)
    discounts: list[DiscountIn] = Field(default_factory=list, max_length=20)


class OrderIn(_Strict):
    """An order. Also checked: line numbers unique within the order, each earliest date
    not after its latest, and ``seller`` the username of an existing seller (400 with the
    field otherwise); an order number already used with a different body is 409."""

    mp_order_number: OrderNumber
    seller: Annotated[
        str,
        *intake_text(
            REQUIRED_TEXT_PATTERN,
            REQUIRED_TEXT_MESSAGE,
            max_length=150,
            description="The username of an existing seller",
        ),
    ]
    marketplace_state: Literal["PENDING", "AWAITING_SHIPMENT"] = Field(
        default="AWAITING_SHIPMENT",
        description="Orders enter as PENDING or AWAITING_SHIPMENT; SHIPPED is set by settlement.",
    )
    sales_channel: Annotated[
        str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=64)
    ]
    purchase_date: DateTime
    currency: Annotated[
        str,
        *_code(
            CURRENCY_CODES,
            "ISO 4217 currency",
            "ISO 4217 currency code; the codes of precious metals (XAU, XAG, XPD, XPT), testing "
            "(XTS), no currency (XXX), bond-market units and units of account (XBA-XBD, XDR, XSU, "
            "XUA, XAD) and funds (BOV, CHE, CHW, CLF, COU, MXV, USN, USS, UYI, UYW) are refused",
        ),
    ]
    location: Annotated[str, *intake_text(max_length=128)] | None = None
    customer: CustomerIn
    shipping_address: AddressIn
    order_lines: list[OrderLineIn] = Field(min_length=1, max_length=200)
    delivery_notes: (
        Annotated[str, *intake_text(NOTES_PATTERN, NOTES_MESSAGE, max_length=2000)] | None
    ) = None
    earliest_ship_date: DateTime | None = None
    latest_ship_date: DateTime | None = None
    earliest_delivery_date: DateTime | None = None
    latest_delivery_date: DateTime | None = None

    # Documentation only: the example changes no rule.
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [ORDER_EXAMPLE]})


class StateIn(_Strict):
    state: Literal["PENDING", "AWAITING_SHIPMENT", "SHIPPED", "CANCELLED"]

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [STATE_EXAMPLE]})


def cross_field_errors(data: OrderIn) -> dict[str, list[str]]:
    """Rules spanning several fields (pydantic reports per field; these need the whole body)."""
    errors: dict[str, list[str]] = {}
    seen: set[str] = set()
    for index, line in enumerate(data.order_lines):
        if line.mp_line_number in seen:
            errors[f"order_lines.{index}.mp_line_number"] = ["duplicate line number"]
        seen.add(line.mp_line_number)

    def window(start: str, end: str) -> None:
        first: datetime | None = getattr(data, start)
        last: datetime | None = getattr(data, end)
        if first and last and first > last:
            errors[end] = [f"must not be before {start}"]

    window("earliest_ship_date", "latest_ship_date")
    window("earliest_delivery_date", "latest_delivery_date")
    errors.update(_finer_than_the_unit(data))
    return errors


def _finer_than_the_unit(data: OrderIn) -> dict[str, list[str]]:
    """Every amount in the order currency's own minor unit (JPY 0 decimals, USD 2): an
    amount finer than it is refused, never rounded (the schema's pattern allows 2 decimals
    for every currency; Babel knows each one's unit)."""
    places = get_currency_precision(data.currency)
    unit = Decimal(1).scaleb(-places)
    message = (
        f"finer than the {data.currency} minor unit: "
        f"{data.currency} amounts have at most {places} decimals"
    )
    errors: dict[str, list[str]] = {}
    for index, line in enumerate(data.order_lines):
        amounts = [("unit_price", line.unit_price), ("shipping_price", line.shipping_price)]
        amounts += [(f"taxes.{n}.amount", tax.amount) for n, tax in enumerate(line.taxes)]
        amounts += [
            (f"discounts.{n}.amount", discount.amount) for n, discount in enumerate(line.discounts)
        ]
        for field, amount in amounts:
            if amount != amount.quantize(unit):
                errors[f"order_lines.{index}.{field}"] = [message]
    return errors
