"""The strict amount parser: what the platform sends is either an exact amount in the
currency's minor unit or a refusal with a code and a message naming the line and field."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from marketplace.returns.amounts import (
    REFUND_AMOUNT_FIELDS,
    AmountError,
    line_amounts_read,
    minor_unit,
    parse_amount,
    round_to_unit,
)
from marketplace.returns.problems import RefundProblemCode, platform_code, platform_message

D = Decimal


@pytest.mark.parametrize(
    ("value", "currency", "expected"),
    [
        (12.5, "USD", D("12.50")),
        ("12.50", "USD", D("12.50")),
        ("12.500", "USD", D("12.50")),  # exactly a cent amount, written longer
        (6.99, "USD", D("6.99")),  # a float through its shortest text, not 6.9900000000000002
        (0, "USD", D("0.00")),
        (D("9999999999.99"), "USD", D("9999999999.99")),
        (1500, "JPY", D("1500")),
        ("1.005", "KWD", D("1.005")),
        (json.loads("24.0"), "EUR", D("24.00")),
    ],
)
def test_a_number_or_numeric_string_in_the_currencys_unit_is_read_exactly(
    value: Any, currency: str, expected: Decimal
) -> None:
    amount = parse_amount(value, currency)

    assert amount == expected
    assert amount.as_tuple().exponent == expected.as_tuple().exponent


@pytest.mark.parametrize(
    ("value", "currency", "code"),
    [
        ("12,50", "USD", RefundProblemCode.INVALID_AMOUNT),
        (" 12.50", "USD", RefundProblemCode.INVALID_AMOUNT),
        ("1e3", "USD", RefundProblemCode.INVALID_AMOUNT),
        ("", "USD", RefundProblemCode.INVALID_AMOUNT),
        (True, "USD", RefundProblemCode.INVALID_AMOUNT),
        ([12], "USD", RefundProblemCode.INVALID_AMOUNT),
        (float("nan"), "USD", RefundProblemCode.INVALID_AMOUNT),
        (json.loads("1e400"), "USD", RefundProblemCode.INVALID_AMOUNT),  # inf
        ("NaN", "USD", RefundProblemCode.INVALID_AMOUNT),
        (None, "USD", RefundProblemCode.MISSING_AMOUNT),
        (1e300, "USD", RefundProblemCode.AMOUNT_OUT_OF_RANGE),
        (99999999999, "USD", RefundProblemCode.AMOUNT_OUT_OF_RANGE),
        ("10000000000", "JPY", RefundProblemCode.AMOUNT_OUT_OF_RANGE),
        (23.995, "USD", RefundProblemCode.AMOUNT_TOO_PRECISE),
        ("13.335", "USD", RefundProblemCode.AMOUNT_TOO_PRECISE),
        (1.5, "JPY", RefundProblemCode.AMOUNT_TOO_PRECISE),
        ("1.0005", "KWD", RefundProblemCode.AMOUNT_TOO_PRECISE),
        (-1, "USD", RefundProblemCode.NEGATIVE_AMOUNT),
        (1, "ZZZ", RefundProblemCode.CURRENCY_MISMATCH),
    ],
)
def test_anything_else_is_refused_with_its_code(value: Any, currency: str, code: str) -> None:
    with pytest.raises(AmountError) as caught:
        parse_amount(value, currency, label="2", field="item_tax_refund")

    assert caught.value.code == code
    assert caught.value.message.startswith("line 2 item_tax_refund: ")
    assert (caught.value.label, caught.value.field) == ("2", "item_tax_refund")


def test_the_message_shows_the_value_as_sent() -> None:
    with pytest.raises(AmountError) as caught:
        parse_amount("12,50", "USD", label="1", field="item_refund")

    assert str(caught.value) == 'line 1 item_refund: "12,50" is not a number'


def test_a_negative_amount_is_read_only_where_allowed() -> None:
    assert parse_amount("-20.00", "USD", allow_negative=True) == D("-20.00")


def test_the_minor_units_come_from_the_currency_data() -> None:
    assert (minor_unit("JPY"), minor_unit("USD"), minor_unit("KWD")) == (0, 2, 3)


@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        (D("0.125"), "USD", D("0.13")),  # half up, not half to even (0.12)
        (D("0.135"), "USD", D("0.14")),
        (D("2.5"), "JPY", D("3")),
        (D("0.0005"), "KWD", D("0.001")),
    ],
)
def test_our_one_rounding_rule_is_half_up_to_the_minor_unit(
    amount: Decimal, currency: str, expected: Decimal
) -> None:
    assert round_to_unit(amount, currency) == expected


def test_every_amount_of_a_line_is_read_and_every_bad_one_reported() -> None:
    item = {
        "item_refund": "12,50",
        "item_tax_refund": None,
        "shipping_refund": 3,
        "shipping_tax_refund": 0.5,
    }  # discount_refund absent

    amounts, errors = line_amounts_read(
        item, fields=REFUND_AMOUNT_FIELDS, currency="USD", label="1"
    )

    assert amounts == {
        "item_refund": None,
        "item_tax_refund": None,
        "shipping_refund": D("3.00"),
        "shipping_tax_refund": D("0.50"),
        "discount_refund": None,
    }
    assert [(e.code, e.field) for e in errors] == [
        ("INVALID_AMOUNT", "item_refund"),
        ("MISSING_AMOUNT", "item_tax_refund"),
        ("MISSING_AMOUNT", "discount_refund"),
    ]


def test_codes_outside_the_platforms_enum_are_sent_as_other_and_named_in_the_message() -> None:
    assert platform_code(RefundProblemCode.EXCESS_ITEM_REFUND) == "EXCESS_ITEM_REFUND"
    assert platform_code(RefundProblemCode.INVALID_AMOUNT) == "OTHER"
    assert platform_message("INVALID_AMOUNT", "line 1 item_refund: x") == (
        "INVALID_AMOUNT: line 1 item_refund: x"
    )
    assert platform_message("UNKNOWN_LINE", "line 9") == "line 9"
