"""Validation problems in plain words: what is wrong and what the seller should do.

The codes are ``marketplace.orders.validation.ProblemCode``; the technical message stays
on the page too (it names the exact value), this adds the sentence a person acts on.
"""

from __future__ import annotations

from dataclasses import dataclass

from marketplace.orders.validation import ProblemCode
from marketplace.returns.problems import RefundProblemCode


@dataclass(frozen=True)
class ProblemHelp:
    title: str
    explanation: str
    fix: str


HELP: dict[str, ProblemHelp] = {
    ProblemCode.INVALID_TRACKING_NUMBER: ProblemHelp(
        "Tracking number not valid",
        "The tracking number does not look like one from this carrier, so the buyer "
        "cannot follow the parcel.",
        "Check the number on the carrier's label and correct the shipment on the platform "
        "(or pick the carrier that issued it).",
    ),
    ProblemCode.UNKNOWN_CARRIER: ProblemHelp(
        "Carrier not recognised",
        "The shipment names a carrier we do not know, so we cannot build a tracking link.",
        "Choose one of the supported carriers (UPS, USPS, FedEx, DHL, OnTrac, LaserShip, "
        "Canada Post, Royal Mail, DPD, GLS, Purolator) when you record the shipment.",
    ),
    ProblemCode.EXCESS_QUANTITY: ProblemHelp(
        "More shipped or cancelled than ordered",
        "The quantities shipped and cancelled on this line add up to more than the buyer ordered.",
        "Correct the shipment or cancellation quantities so they add up to at most the "
        "ordered quantity.",
    ),
    ProblemCode.UNKNOWN_LINE: ProblemHelp(
        "Line not on this order",
        "A shipment or cancellation refers to an order line that is not part of this order.",
        "Record the shipment against the right line of this order, and remove the one "
        "recorded against the unknown line.",
    ),
    ProblemCode.INVALID_SHIP_DATE: ProblemHelp(
        "Ship date not plausible",
        "The shipped date is missing, before the order was placed, or in the future.",
        "Set the shipped date to the day the parcel actually left (today or earlier, not "
        "before the purchase date).",
    ),
}

FALLBACK = ProblemHelp(
    "Problem with this fulfillment",
    "Something in the fulfillment you recorded could not be accepted.",
    "Read the details below, correct the fulfillment on the platform, and contact "
    "marketplace support if it is unclear.",
)


def problem_help(code: str) -> ProblemHelp:
    return HELP.get(code, FALLBACK)


# The codes of a seller's refund or a buyer's return that the marketplace refused
# (``marketplace/returns/checks.py``): what the seller reads on the portal.
REFUND_HELP: dict[str, ProblemHelp] = {
    RefundProblemCode.EXCESS_ITEM_REFUND: ProblemHelp(
        "Refund above what the buyer paid",
        "Together with what was already refunded on this line, this refund is more than "
        "the buyer paid for it (item, tax and shipping, less discounts). Nothing of it was "
        "paid to the buyer.",
        "Post a new refund for at most the amount still open on the line (shown below).",
    ),
    RefundProblemCode.EXCESS_REFUND: ProblemHelp(
        "Return refund above what the buyer paid",
        "The amounts you refunded on this return, with earlier refunds of the line, come to "
        "more than the buyer paid for it. Nothing of it was paid to the buyer.",
        "Contact marketplace support: the return stays open until its amounts are corrected.",
    ),
    RefundProblemCode.EXCESS_QUANTITY: ProblemHelp(
        "More refunded than ordered",
        "The refund's quantity on a line is above the quantity the buyer ordered.",
        "Post a new refund with at most the ordered quantity.",
    ),
    RefundProblemCode.UNKNOWN_LINE: ProblemHelp(
        "Line not on this order",
        "The refund names an order line that is not part of this order.",
        "Post the refund again against a line of this order.",
    ),
    RefundProblemCode.CURRENCY_MISMATCH: ProblemHelp(
        "Wrong currency",
        "The refund is in a currency other than the one the buyer paid in.",
        "Post the refund again in the order's currency.",
    ),
    RefundProblemCode.NEGATIVE_AMOUNT: ProblemHelp(
        "Refund amount below zero",
        "A line of the refund comes to less than zero (a discount refund larger than the "
        "rest). Nothing of it was paid to the buyer.",
        "Post a new refund whose amounts on each line add up to zero or more.",
    ),
    RefundProblemCode.INVALID_AMOUNT: ProblemHelp(
        "Amount not readable",
        'An amount of the refund is not a number (for example "12,50" with a comma, or '
        "text). Nothing of it was paid to the buyer.",
        "Correct the amount on the named line and field, written with a point "
        "(12.50), and send the refund again.",
    ),
    RefundProblemCode.MISSING_AMOUNT: ProblemHelp(
        "Amount missing",
        "An amount of the refund is empty. An empty amount is not read as zero, so "
        "nothing of it was paid to the buyer.",
        "Fill in the named amount (0 when nothing is refunded for it) and send it again.",
    ),
    RefundProblemCode.AMOUNT_OUT_OF_RANGE: ProblemHelp(
        "Amount out of range",
        "An amount of the refund is far larger than any refund can be. Nothing of it was "
        "paid to the buyer.",
        "Correct the amount on the named line and field and send the refund again.",
    ),
    RefundProblemCode.AMOUNT_TOO_PRECISE: ProblemHelp(
        "Amount finer than the currency allows",
        "An amount has more decimal places than the order's currency has (cents for USD, "
        "none for JPY). We do not round refunds. Nothing of it was paid to the buyer.",
        "Send the amount in the currency's own unit (for example 23.99 or 24.00, not 23.995).",
    ),
    RefundProblemCode.DUPLICATE_LINE: ProblemHelp(
        "Line named twice",
        "The refund names the same line more than once, so it is unclear what was "
        "refunded. Nothing of it was paid to the buyer.",
        "Send the refund again with each line once, its amounts added together.",
    ),
    RefundProblemCode.NO_REFUND_LINES: ProblemHelp(
        "No refund lines",
        "The refund has no lines, so there is nothing to pay the buyer.",
        "Send the refund again with the lines and amounts refunded.",
    ),
}
REFUND_FALLBACK = ProblemHelp(
    "Refund not accepted",
    "The marketplace could not accept this refund.",
    "Read the details below and contact marketplace support if it is unclear.",
)
