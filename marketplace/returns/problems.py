"""The codes the marketplace reports on a seller's refund or a return's refund.

``RefundProblemCode`` holds every after-sale problem we find, each under its own name, so
staff and sellers read what exactly went wrong (plain words in
``portal.problem_help.REFUND_HELP``). The platform's errors endpoints take only the codes
of their own enum (the reference's examples and the sandbox: ``EXCESS_ITEM_REFUND`` on a
refund, ``EXCESS_REFUND`` on a return, ``EXCESS_QUANTITY``, ``UNKNOWN_LINE``,
``CURRENCY_MISMATCH``, ``OTHER``): a code of ours outside that list is sent as ``OTHER``
(``platform_code``), its message starting with our code and naming the line and field.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RefundProblemCode(StrEnum):
    """``EXCESS_ITEM_REFUND`` is a refund's, ``EXCESS_REFUND`` a return's."""

    EXCESS_ITEM_REFUND = "EXCESS_ITEM_REFUND"
    EXCESS_REFUND = "EXCESS_REFUND"
    EXCESS_QUANTITY = "EXCESS_QUANTITY"
    UNKNOWN_LINE = "UNKNOWN_LINE"
    CURRENCY_MISMATCH = "CURRENCY_MISMATCH"
    # A line whose refund amounts come to less than zero (or one amount below zero): not a
    # refund, and accepting it would lower what the line counts as refunded and let a
    # later refund go above the cost.
    NEGATIVE_AMOUNT = "NEGATIVE_AMOUNT"
    # Not a JSON number nor a numeric string ("12,50", true, an object), or not finite.
    INVALID_AMOUNT = "INVALID_AMOUNT"
    # Null or absent where the contract requires an amount: never read as zero.
    MISSING_AMOUNT = "MISSING_AMOUNT"
    # Outside what a refund can be (|amount| >= 10^10 major units, e.g. 1e300).
    AMOUNT_OUT_OF_RANGE = "AMOUNT_OUT_OF_RANGE"
    # Finer than the currency's minor unit (23.995 USD, 1.5 JPY): never rounded silently.
    AMOUNT_TOO_PRECISE = "AMOUNT_TOO_PRECISE"
    # The same line named twice in one answer.
    DUPLICATE_LINE = "DUPLICATE_LINE"
    # A refund, or a REFUNDED return, with no refund lines.
    NO_REFUND_LINES = "NO_REFUND_LINES"


@dataclass(frozen=True)
class Problem:
    """One problem found on a refund or a return's refund: its code (a
    ``RefundProblemCode``), a message naming the line and field, and the line as the
    platform names it (``""`` for the whole refund)."""

    code: str
    message: str
    label: str = ""


# The platform's own codes (its errors endpoints refuse any other).
PLATFORM_CODES = frozenset(
    {
        RefundProblemCode.EXCESS_ITEM_REFUND,
        RefundProblemCode.EXCESS_REFUND,
        RefundProblemCode.EXCESS_QUANTITY,
        RefundProblemCode.UNKNOWN_LINE,
        RefundProblemCode.CURRENCY_MISMATCH,
    }
)
PLATFORM_OTHER = "OTHER"


def platform_code(code: str) -> str:
    """The code the platform's errors endpoints take for ``code``."""
    return code if code in PLATFORM_CODES else PLATFORM_OTHER


def platform_message(code: str, message: str) -> str:
    """The message sent with ``platform_code(code)``: ours is named when the platform's
    code is the catch-all, so the seller's system still sees which rule it broke."""
    return message if code in PLATFORM_CODES else f"{code}: {message}"
