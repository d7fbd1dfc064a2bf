"""Checks on the seller's fulfillment as pulled from the platform.

Each rule is a small named function returning the problems it finds; ``fulfillment_problems``
runs them all. Problem codes are kept in ``ProblemCode`` (the platform publishes no list;
these are the project's); those of refunds and returns are the returns app's
(``marketplace/returns/problems.py``). A problem's ``fingerprint`` identifies it across
pulls so the platform is told once, and a problem that disappears can be marked resolved.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from enum import StrEnum
from typing import Any


class ProblemCode(StrEnum):
    INVALID_TRACKING_NUMBER = "INVALID_TRACKING_NUMBER"
    UNKNOWN_CARRIER = "UNKNOWN_CARRIER"
    EXCESS_QUANTITY = "EXCESS_QUANTITY"
    UNKNOWN_LINE = "UNKNOWN_LINE"
    INVALID_SHIP_DATE = "INVALID_SHIP_DATE"


def _carrier_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


# Normalized name → canonical name. Format rules exist for the four big US carriers;
# the others are accepted with any non-empty tracking number.
KNOWN_CARRIERS: dict[str, str] = {
    "ups": "UPS",
    "usps": "USPS",
    "fedex": "FedEx",
    "dhl": "DHL",
    "dhlexpress": "DHL",
    "ontrac": "OnTrac",
    "lasership": "LaserShip",
    "canadapost": "Canada Post",
    "royalmail": "Royal Mail",
    "dpd": "DPD",
    "gls": "GLS",
    "purolator": "Purolator",
}

TRACKING_FORMATS: dict[str, tuple[re.Pattern[str], str]] = {
    "UPS": (re.compile(r"1Z[0-9A-Z]{16}"), "1Z followed by 16 letters or digits"),
    "USPS": (
        re.compile(r"\d{20,22}|[A-Z]{2}\d{9}US"),
        "20 to 22 digits, or 2 letters, 9 digits and US",
    ),
    "FedEx": (re.compile(r"\d{12}|\d{15}|\d{20}"), "12, 15 or 20 digits"),
    "DHL": (re.compile(r"\d{10}"), "10 digits"),
}

# Sellers and the platform date shipments in the seller's local day; one day of slack
# either side keeps time zones from producing false alarms.
SHIP_DATE_SLACK = timedelta(days=1)


@dataclass(frozen=True)
class ShipmentIn:
    quantity: int
    carrier: str
    tracking_number: str
    tracking_url: str
    shipped_date: date | None
    shipped_date_raw: str


@dataclass(frozen=True)
class CancellationIn:
    quantity: int
    reason: str


@dataclass(frozen=True)
class LineFulfillmentIn:
    mp_line_number: str
    shipments: tuple[ShipmentIn, ...] = ()
    cancellations: tuple[CancellationIn, ...] = ()

    @property
    def shipped(self) -> int:
        return sum(s.quantity for s in self.shipments)

    @property
    def cancelled(self) -> int:
        return sum(c.quantity for c in self.cancellations)


@dataclass(frozen=True)
class Problem:
    code: ProblemCode
    message: str
    mp_line_number: str = ""
    # What makes this problem distinct from another of the same code on the same line.
    key: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        raw = "|".join((self.code, self.mp_line_number, self.key))
        return hashlib.sha256(raw.encode()).hexdigest()

    def as_report(self) -> dict[str, Any]:
        """One element of the ``POST /orders/{n}/errors`` array."""
        report: dict[str, Any] = {"code": str(self.code), "message": self.message}
        if self.mp_line_number:
            report["mp_line_number"] = self.mp_line_number
        if self.detail:
            report["debug"] = [self.detail]
        return report


def _int(value: Any) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


def _date(value: Any) -> date | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def parse_fulfillments(body: dict[str, Any]) -> list[LineFulfillmentIn]:
    """The platform's ``GET /orders/{n}/fulfillments`` body, read leniently (extra keys ignored)."""
    lines = []
    for entry in body.get("fulfillments") or []:
        if not isinstance(entry, dict):
            continue
        shipments = tuple(
            ShipmentIn(
                quantity=_int(s.get("quantity")),
                carrier=str(s.get("carrier") or "").strip(),
                tracking_number=str(s.get("tracking_number") or "").strip(),
                tracking_url=str(s.get("tracking_url") or "").strip(),
                shipped_date=_date(s.get("shipped_date")),
                shipped_date_raw=str(s.get("shipped_date") or ""),
            )
            for s in entry.get("shipments") or []
            if isinstance(s, dict)
        )
        cancellations = tuple(
            CancellationIn(quantity=_int(c.get("quantity")), reason=str(c.get("reason") or ""))
            for c in entry.get("cancellations") or []
            if isinstance(c, dict)
        )
        lines.append(
            LineFulfillmentIn(
                mp_line_number=str(entry.get("mp_line_number") or ""),
                shipments=shipments,
                cancellations=cancellations,
            )
        )
    return lines


def canonical_carrier(name: str) -> str | None:
    return KNOWN_CARRIERS.get(_carrier_key(name))


def normalized_tracking_number(value: str) -> str:
    return re.sub(r"\s+", "", value).upper()


# --- the rules ---------------------------------------------------------------------


def rule_line_exists(line: LineFulfillmentIn, *, ordered: dict[str, int]) -> list[Problem]:
    """The seller fulfilled a line that is not on our order."""
    if line.mp_line_number in ordered:
        return []
    return [
        Problem(
            ProblemCode.UNKNOWN_LINE,
            f"line {line.mp_line_number!r} is not part of this order",
            line.mp_line_number,
        )
    ]


def rule_known_carrier(shipment: ShipmentIn, *, mp_line_number: str) -> list[Problem]:
    if canonical_carrier(shipment.carrier):
        return []
    return [
        Problem(
            ProblemCode.UNKNOWN_CARRIER,
            f"carrier {shipment.carrier or '(none)'!r} is not a carrier we know",
            mp_line_number,
            key=f"{_carrier_key(shipment.carrier)}:{shipment.tracking_number}",
            detail={"carrier": shipment.carrier},
        )
    ]


def rule_tracking_number_format(shipment: ShipmentIn, *, mp_line_number: str) -> list[Problem]:
    """The tracking number must match its carrier's format (carriers with a known format)."""
    carrier = canonical_carrier(shipment.carrier)
    number = normalized_tracking_number(shipment.tracking_number)
    if carrier is None:
        return []  # rule_known_carrier already reports it
    expected = TRACKING_FORMATS.get(carrier)
    if number and (expected is None or expected[0].fullmatch(number)):
        return []
    why = f"expected {expected[1]}" if expected else "a tracking number is required"
    return [
        Problem(
            ProblemCode.INVALID_TRACKING_NUMBER,
            f"{carrier} tracking number {shipment.tracking_number!r} is not valid: {why}",
            mp_line_number,
            key=f"{carrier}:{number}",
            detail={"carrier": carrier, "tracking_number": shipment.tracking_number},
        )
    ]


def rule_quantity_within_ordered(line: LineFulfillmentIn, *, ordered: int) -> list[Problem]:
    """Shipped plus cancelled must not exceed what was ordered."""
    total = line.shipped + line.cancelled
    if total <= ordered:
        return []
    return [
        Problem(
            ProblemCode.EXCESS_QUANTITY,
            f"shipped {line.shipped} + cancelled {line.cancelled} exceeds the {ordered} ordered",
            line.mp_line_number,
            detail={"ordered": ordered, "shipped": line.shipped, "cancelled": line.cancelled},
        )
    ]


def rule_ship_date(
    shipment: ShipmentIn, *, mp_line_number: str, purchase_date: datetime, today: date
) -> list[Problem]:
    """The shipped date is a real date, not before the purchase and not in the future."""
    shipped = shipment.shipped_date
    if shipped is None:
        reason = f"shipped date {shipment.shipped_date_raw or '(none)'!r} is not a date"
    elif shipped < purchase_date.date() - SHIP_DATE_SLACK:
        reason = f"shipped date {shipped} is before the purchase date {purchase_date.date()}"
    elif shipped > today + SHIP_DATE_SLACK:
        reason = f"shipped date {shipped} is in the future"
    else:
        return []
    return [
        Problem(
            ProblemCode.INVALID_SHIP_DATE,
            reason,
            mp_line_number,
            key=f"{shipment.tracking_number}:{shipment.shipped_date_raw}",
            detail={"shipped_date": shipment.shipped_date_raw},
        )
    ]


def fulfillment_problems(
    lines: list[LineFulfillmentIn],
    *,
    ordered: dict[str, int],
    purchase_date: datetime,
    today: date,
) -> list[Problem]:
    """Every problem in one order's fulfillment, each once (by fingerprint)."""
    found: dict[str, Problem] = {}
    for line in lines:
        problems = rule_line_exists(line, ordered=ordered)
        if not problems:
            problems = rule_quantity_within_ordered(line, ordered=ordered[line.mp_line_number])
        for shipment in line.shipments:
            problems += rule_known_carrier(shipment, mp_line_number=line.mp_line_number)
            problems += rule_tracking_number_format(shipment, mp_line_number=line.mp_line_number)
            problems += rule_ship_date(
                shipment,
                mp_line_number=line.mp_line_number,
                purchase_date=purchase_date,
                today=today,
            )
        for problem in problems:
            found.setdefault(problem.fingerprint, problem)
    return list(found.values())
