"""What each measure is: its words for people (the definition shown on the pages and in
the README), the stored columns it is read from, and which side of its threshold is bad.

Thresholds are settings (``PERFORMANCE_THRESHOLDS``); a seller is judged on the
``PERFORMANCE_FLAG_WINDOW_DAYS`` window, and only once the measure's denominator reaches
``PERFORMANCE_MIN_SAMPLE`` (three late orders out of four say little).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from django.conf import settings

WINDOWS = (7, 30, 90)
Unit = Literal["percent", "days", "count"]


@dataclass(frozen=True)
class Measure:
    key: str
    label: str
    field: str  # the Scorecard column holding the measure
    unit: Unit
    # "above": higher is worse (flag when above the threshold); "below": lower is worse.
    bad: Literal["above", "below"]
    definition: str
    advice: str  # what the seller can do about it (their Performance page)
    numerator: str = ""  # Scorecard columns shown beside the measure ("3 of 120")
    denominator: str = ""
    # The list of orders behind the figure (selectors.ORDER_LISTS), when there is one.
    orders: str = ""
    # The sample the minimum applies to ("" = always judged).
    sample: str = ""
    # What the denominator counts, for a measure with no numerator ("40 shipped").
    counted: str = ""

    @property
    def text(self) -> str:
        """The definition with the settings it names filled in."""
        return self.definition.format(
            handling_days=settings.PERFORMANCE_HANDLING_DAYS,
            authorization_days=settings.RETURN_AUTHORIZATION_DAYS,
        )

    @property
    def threshold(self) -> float:
        return float(settings.PERFORMANCE_THRESHOLDS[self.key])

    def is_over(self, value: float | None) -> bool:
        if value is None:
            return False
        return value > self.threshold if self.bad == "above" else value < self.threshold


def value_text(measure: Measure, value: float | None) -> str:
    """The value as people read it: "4.2 %", "1.5 days", "3"; "-" when there is none."""
    if value is None:
        return "-"
    # A no-break space: the number and its unit never part at the end of a line.
    if measure.unit == "percent":
        return f"{value * 100:.1f}\u00a0%"
    if measure.unit == "days":
        return f"{value:.1f}\u00a0days"
    return f"{value:.0f}"


MEASURES: tuple[Measure, ...] = (
    Measure(
        "late_shipment",
        "Late shipment rate",
        "late_rate",
        "percent",
        "above",
        "Of the orders placed in the window whose shipping was due or done, the share whose "
        "first package's shipped date is after the ship-by day (the order's latest ship "
        "date; an order without one gets the purchase date plus the default handling time of "
        "{handling_days} days), "
        "or that are still unshipped, not cancelled, after their ship-by day. Days are UTC "
        "calendar days.",
        "Ship before the ship-by date shown on each order, and confirm the shipment on the "
        "platform the same day. If you often need longer, raise your handling time on the "
        "platform so buyers are promised a later date.",
        numerator="shipped_late",
        denominator="ship_due",
        orders="late",
        sample="ship_due",
    ),
    Measure(
        "valid_tracking",
        "Valid tracking rate",
        "valid_tracking_rate",
        "percent",
        "below",
        "Of the orders placed in the window that have a dated shipment, the share whose "
        "carriers and tracking numbers passed our checks the first time: no unknown carrier "
        "and no malformed tracking number was ever found on the order, even if corrected "
        "later.",
        "Pick the carrier from the platform's list and copy the tracking number exactly as "
        "the carrier gives it (UPS numbers start with 1Z, FedEx has 12, 15 or 20 digits).",
        numerator="tracking_valid",
        denominator="shipped",
        orders="invalid_tracking",
        sample="shipped",
    ),
    Measure(
        "seller_cancel",
        "Cancellation rate",
        "cancel_rate",
        "percent",
        "above",
        "Of the orders placed in the window, the share where you cancelled at least one line "
        "(or part of one) before shipping it. Orders the marketplace or the buyer cancelled "
        "are not counted.",
        "Keep your stock levels in the catalog feed up to date, so that buyers cannot order "
        "what you do not have.",
        numerator="seller_cancelled",
        denominator="orders",
        orders="cancelled",
        sample="orders",
    ),
    Measure(
        "refund_rate",
        "Refund rate",
        "refund_rate",
        "percent",
        "above",
        "Of the orders placed in the window, the share that has at least one refund you posted.",
        "Describe products accurately and pack them well: most refunds follow an item that "
        "was not as described or arrived damaged.",
        numerator="refunded_orders",
        denominator="orders",
        orders="refunded",
        sample="orders",
    ),
    Measure(
        "refund_money",
        "Refunded money",
        "refund_amount_rate",
        "percent",
        "above",
        "The amounts of your refunds on the window's orders (items, shipping and their taxes, "
        "less discounts) as a share of those orders' value (items and shipping).",
        "As for the refund rate: fewer refunds, and partial refunds where the buyer agrees.",
        numerator="refund_amount",
        denominator="order_amount",
        orders="refunded",
        sample="orders",
    ),
    Measure(
        "return_rate",
        "Return rate",
        "return_rate",
        "percent",
        "above",
        "Of the orders placed in the window, the share with at least one return request.",
        "Check the return reasons on your Returns page: repeated reasons point at a product "
        "page or a packaging to fix.",
        numerator="returned_orders",
        denominator="orders",
        orders="returned",
        sample="orders",
    ),
    Measure(
        "return_money",
        "Returned money",
        "return_amount_rate",
        "percent",
        "above",
        "The refunds buyers requested in their returns (principal and tax) on the window's "
        "orders, as a share of those orders' value.",
        "As for the return rate.",
        numerator="return_amount",
        denominator="order_amount",
        orders="returned",
        sample="orders",
    ),
    Measure(
        "paused_refunds",
        "Paused refunds",
        "paused_refund_rate",
        "percent",
        "above",
        "Of your refunds on the window's orders, the share the marketplace had to pause at "
        "least once because of errors (an amount above what was paid, an unknown line...).",
        "Refund at most what the buyer paid for each line, and name the order's own lines.",
        numerator="refunds_paused",
        denominator="refunds",
        orders="paused",
        sample="refunds",
    ),
    Measure(
        "ship_days_median",
        "Order to shipment, median",
        "ship_days_median",
        "days",
        "above",
        "Calendar days from the purchase date to the first package's shipped date, the "
        "median over the window's orders with a dated shipment.",
        "Ship the day the order arrives when you can: buyers see faster delivery.",
        denominator="shipped",
        sample="shipped",
        counted="shipped",
    ),
    Measure(
        "ship_days_p90",
        "Order to shipment, 90th percentile",
        "ship_days_p90",
        "days",
        "above",
        "As the median, but the 90th percentile (interpolated): 9 orders in 10 shipped "
        "within this many days.",
        "Look at your slowest orders (the late list): they are often one product or one warehouse.",
        denominator="shipped",
        sample="shipped",
        counted="shipped",
    ),
    Measure(
        "listing_refusal",
        "Listing refusal rate",
        "listing_refusal_rate",
        "percent",
        "above",
        "Of the rows of your catalog feed runs received in the window (applied or held), the "
        "share the marketplace refused.",
        "Open your Catalog page: each refused row says why (a missing price, an unknown "
        "category...). Fix it in your feed.",
        numerator="listing_refused",
        denominator="listing_rows",
        sample="listing_rows",
    ),
    Measure(
        "returns_overdue",
        "Returns waiting too long",
        "returns_overdue",
        "count",
        "above",
        "Returns requested in the window still waiting for your authorization more than "
        "{authorization_days} days after the buyer asked (the page also shows how many "
        "wait, and since when the oldest).",
        "Answer each return request on your Returns page: authorize it, or say why not.",
        orders="returns_overdue",
    ),
    Measure(
        "authorization_days_median",
        "Return authorization wait, median",
        "authorization_days_median",
        "days",
        "above",
        "Calendar days from the buyer's return request to the day the marketplace first saw "
        "it authorized (or refunded, for a return that needed no authorization), the median "
        "over the returns requested in the window that you have authorized. Returns still "
        "waiting are not in it (see returns waiting too long), nor returns refused.",
        "Authorize return requests the day they arrive: the buyer waits for your answer "
        "before sending the parcel back.",
        denominator="returns_authorized",
        sample="returns_authorized",
        counted="authorized",
    ),
    Measure(
        "authorization_days_p90",
        "Return authorization wait, 90th percentile",
        "authorization_days_p90",
        "days",
        "above",
        "As the median, but the 90th percentile (interpolated): 9 returns in 10 were "
        "authorized within this many days.",
        "Check your Returns page every working day: the longest waits are usually requests "
        "that arrived while nobody looked.",
        denominator="returns_authorized",
        sample="returns_authorized",
        counted="authorized",
    ),
)

BY_KEY = {measure.key: measure for measure in MEASURES}
