"""The intake body of a return (``POST /api/intake/orders/{n}/returns``).

Built from the order intake's field rules (``orders.intake_schema``): the same text,
segment and quantity rules, unknown fields refused. Amounts are not sent: the return
asks back what the buyer paid for the returned units (``money.requested_refund``).
Rules that need the order (the line exists, was shipped, is not returned twice) are
the service's (``services/intake.py``).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from marketplace.orders.intake_schema import (
    REQUIRED_TEXT_MESSAGE,
    REQUIRED_TEXT_PATTERN,
    LineNumber,
    OrderNumber,
    Quantity,
    intake_text,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


RETURN_EXAMPLE: dict[str, Any] = {
    "mp_return_number": "RET-100234-1",
    "reason": "Too small",
    "preauthorized": False,
    "carrier": "DHL",
    "tracking_number": "1234567890",
    "return_lines": [{"mp_line_number": "1", "quantity": 1}],
}


# The earliest request date taken: older is a typo, not a return (and a date near the
# calendar's end overflows the respond date computed from it).
EARLIEST_REQUEST_DATE = date(2000, 1, 1)


def _plausible_request_date(value: date) -> date:
    # Tomorrow still counts as today: the sender's day may start before ours.
    latest = timezone.localdate() + timedelta(days=1)
    if not EARLIEST_REQUEST_DATE <= value <= latest:
        raise ValueError(
            f"must be between {EARLIEST_REQUEST_DATE.isoformat()} and today "
            f"({latest.isoformat()} at the latest)"
        )
    return value


RequestDate = Annotated[
    date,
    AfterValidator(_plausible_request_date),
    # What a schema can say of the bound (years 2000-2099); "not after tomorrow" is prose.
    Field(json_schema_extra={"pattern": r"^20[0-9]{2}-[0-9]{2}-[0-9]{2}$"}),
]


class ReturnLineIn(_Strict):
    mp_line_number: LineNumber = Field(description="The order line returned")
    quantity: Quantity = Field(
        description="At most the line's shipped quantity less what earlier returns took "
        "(rejected returns take nothing)"
    )


class ReturnIn(_Strict):
    """A buyer's return of shipped units. Also checked: every line is on the order and
    named once, and its quantity is shipped and not yet returned (400 naming the line);
    an unknown order is 404; the same return number with a different body is 409."""

    mp_return_number: OrderNumber = Field(description="One URL path segment; unique per order")
    reason: Annotated[
        str, *intake_text(REQUIRED_TEXT_PATTERN, REQUIRED_TEXT_MESSAGE, max_length=500)
    ]
    preauthorized: bool = Field(
        default=False,
        description="The marketplace already authorized the return: the seller may refund "
        "it without authorizing first",
    )
    carrier: Annotated[str, *intake_text(max_length=64)] | None = Field(
        default=None, description="The buyer's return parcel"
    )
    tracking_number: Annotated[str, *intake_text(max_length=128)] | None = None
    return_type: Literal["SHIP", "NO_RETURN"] = Field(
        default="SHIP",
        description="SHIP: the buyer sends the item back; NO_RETURN: refunded without it "
        "(the Order Source reference's two types; IN_STORE is v2's only)",
    )
    request_date: RequestDate | None = Field(
        default=None,
        description="The day the buyer asked (YYYY-MM-DD), from 2000-01-01 to today "
        "(tomorrow is taken, for senders in a zone ahead of ours); today when absent",
    )
    return_lines: list[ReturnLineIn] = Field(min_length=1, max_length=200)

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [RETURN_EXAMPLE]})
