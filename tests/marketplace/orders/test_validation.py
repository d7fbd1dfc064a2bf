"""Each fulfillment validation rule on its own, then all of them together."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from marketplace.orders.validation import (
    CancellationIn,
    LineFulfillmentIn,
    ProblemCode,
    ShipmentIn,
    fulfillment_problems,
    parse_fulfillments,
    rule_known_carrier,
    rule_line_exists,
    rule_quantity_within_ordered,
    rule_ship_date,
    rule_tracking_number_format,
)

PURCHASED = datetime(2024, 4, 18, 10, 0, tzinfo=UTC)
TODAY = date(2024, 4, 22)


def shipment(
    carrier: str = "UPS",
    tracking: str = "1Z999AA10123456784",
    quantity: int = 1,
    shipped: date | None = date(2024, 4, 20),
) -> ShipmentIn:
    return ShipmentIn(
        quantity=quantity,
        carrier=carrier,
        tracking_number=tracking,
        tracking_url="",
        shipped_date=shipped,
        shipped_date_raw=shipped.isoformat() if shipped else "",
    )


@pytest.mark.parametrize(
    ("carrier", "tracking"),
    [
        ("UPS", "1Z999AA10123456784"),
        ("ups", "1z999aa10123456784"),
        ("USPS", "9400111899223197428490"),
        ("USPS", "94001118992231974284"),
        ("USPS", "EA123456789US"),
        ("FedEx", "123456789012"),
        ("FEDEX", "123456789012345"),
        ("Fedex", "12345678901234567890"),
        ("DHL", "1234567890"),
        ("DHL Express", "1234567890"),
        ("OnTrac", "C11031500001879"),
    ],
)
def test_tracking_number_in_the_carriers_format_passes(carrier: str, tracking: str) -> None:
    assert rule_tracking_number_format(shipment(carrier, tracking), mp_line_number="1") == []


@pytest.mark.parametrize(
    ("carrier", "tracking"),
    [
        ("UPS", "1Z12-BAD"),
        ("UPS", "2Z999AA10123456784"),
        ("USPS", "94001"),
        ("USPS", "EA12345678US"),
        ("FedEx", "FDX-12AB"),
        ("FedEx", "1234567890123"),
        ("DHL", "DHL#123"),
        ("DHL", "12345678901"),
        ("UPS", ""),
    ],
)
def test_tracking_number_not_in_the_carriers_format_is_a_problem(
    carrier: str, tracking: str
) -> None:
    problems = rule_tracking_number_format(shipment(carrier, tracking), mp_line_number="1")
    assert [p.code for p in problems] == [ProblemCode.INVALID_TRACKING_NUMBER]
    assert problems[0].mp_line_number == "1"


def test_unknown_carrier_is_a_problem_and_its_number_is_not_judged() -> None:
    bad = shipment("Acme Parcel Express", "12345678901234")
    assert [p.code for p in rule_known_carrier(bad, mp_line_number="1")] == [
        ProblemCode.UNKNOWN_CARRIER
    ]
    assert rule_tracking_number_format(bad, mp_line_number="1") == []
    assert rule_known_carrier(shipment("UPS"), mp_line_number="1") == []


def test_shipped_plus_cancelled_above_ordered_is_excess_quantity() -> None:
    line = LineFulfillmentIn(
        "1", shipments=(shipment(quantity=2),), cancellations=(CancellationIn(2, "other"),)
    )
    assert [p.code for p in rule_quantity_within_ordered(line, ordered=3)] == [
        ProblemCode.EXCESS_QUANTITY
    ]
    assert rule_quantity_within_ordered(line, ordered=4) == []


def test_fulfillment_of_a_line_we_do_not_have_is_unknown_line() -> None:
    line = LineFulfillmentIn("9", shipments=(shipment(),))
    assert [p.code for p in rule_line_exists(line, ordered={"1": 3})] == [ProblemCode.UNKNOWN_LINE]
    assert rule_line_exists(LineFulfillmentIn("1"), ordered={"1": 3}) == []


@pytest.mark.parametrize(
    ("shipped", "ok"),
    [
        (date(2024, 4, 18), True),
        (date(2024, 4, 17), True),  # one day of slack for time zones
        (date(2024, 4, 16), False),  # before the purchase
        (date(2024, 4, 23), True),
        (date(2024, 4, 29), False),  # in the future
        (None, False),  # not a date
    ],
)
def test_ship_date_between_purchase_and_today(shipped: date | None, ok: bool) -> None:
    problems = rule_ship_date(
        shipment(shipped=shipped), mp_line_number="1", purchase_date=PURCHASED, today=TODAY
    )
    assert (problems == []) is ok
    if not ok:
        assert problems[0].code == ProblemCode.INVALID_SHIP_DATE


def test_all_rules_together_report_each_problem_once_with_stable_fingerprints() -> None:
    body = {
        "status": "PARTIALLY_FULFILLED",
        "extra_field_from_the_future": True,
        "fulfillments": [
            {
                "mp_line_number": "1",
                "status": "COMPLETE",
                "shipments": [
                    {"quantity": 2, "carrier": "UPS", "tracking_number": "1Z12-BAD",
                     "shipped_date": "2024-04-20", "tracking_url": "", "new": 1},
                    {"quantity": 2, "carrier": "Acme", "tracking_number": "X",
                     "shipped_date": "2030-01-01"},
                ],
                "cancellations": [],
            },
            {"mp_line_number": "ZZ", "shipments": [], "cancellations": [{"quantity": 1}]},
        ],
    }  # fmt: skip
    lines = parse_fulfillments(body)
    problems = fulfillment_problems(
        lines, ordered={"1": 3, "2": 1}, purchase_date=PURCHASED, today=TODAY
    )
    codes = sorted(p.code for p in problems)
    assert codes == sorted(
        [
            ProblemCode.INVALID_TRACKING_NUMBER,
            ProblemCode.UNKNOWN_CARRIER,
            ProblemCode.EXCESS_QUANTITY,
            ProblemCode.UNKNOWN_LINE,
            ProblemCode.INVALID_SHIP_DATE,
        ]
    )
    again = fulfillment_problems(
        parse_fulfillments(body), ordered={"1": 3, "2": 1}, purchase_date=PURCHASED, today=TODAY
    )
    assert {p.fingerprint for p in again} == {p.fingerprint for p in problems}
    report = next(p for p in problems if p.code == ProblemCode.UNKNOWN_LINE).as_report()
    assert report["code"] == "UNKNOWN_LINE"
    assert report["mp_line_number"] == "ZZ"
