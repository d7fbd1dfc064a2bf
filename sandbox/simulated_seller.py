"""The simulated seller: ships and cancels orders the marketplace placed.

Driven by the control API (and optionally an auto-ship timer). Good fulfillments carry
tracking numbers valid for their carrier; "bad" ones, on request, carry exactly the
problem asked for, so the marketplace's validation and error reports can be tested.
Every change bumps the order's ``seller_updated_at`` (sandbox clock).
"""

import logging
import random
import secrets
import string
import threading
import time
from datetime import timedelta

from django.db import close_old_connections, transaction

from sandbox import clock, switches
from sandbox.fulfillment import (
    STORED_NAMES,
    fulfillments_json,
    line_summaries,
    ordered_quantities,
    overall_status,
)
from sandbox.models import Order

__all__ = ["fulfillments_json"]

log = logging.getLogger(__name__)

CARRIERS = ("UPS", "USPS", "FedEx", "DHL")
CANCELLATION_REASONS = (
    "customer_cancelled",
    "unable_to_ship",
    "out_of_stock",
    "price_error",
    "tax_error",
    "shipping_price_error",
    "other",
)
BAD_KINDS = (
    "unknown_carrier",
    "malformed_tracking",
    "excess_quantity",
    "unknown_line",
    "future_ship_date",
)
TRACKING_URLS = {
    "UPS": "https://www.ups.com/track?tracknum={}",
    "USPS": "https://tools.usps.com/go/TrackConfirmAction?tLabels={}",
    "FedEx": "https://www.fedex.com/fedextrack/?trknbr={}",
    "DHL": "https://www.dhl.com/global-en/home/tracking.html?tracking-id={}",
}


class SellerActionError(Exception):
    def __init__(self, message: str, status: int = 400, error: str = "bad_request") -> None:
        super().__init__(message)
        self.status = status
        self.error = error


def _digits(count: int) -> str:
    return "".join(secrets.choice(string.digits) for _ in range(count))


def tracking_number(carrier: str) -> str:
    """A tracking number in the carrier's format (UPS 1Z+16, USPS 22, FedEx 12, DHL 10)."""
    if carrier == "UPS":
        alphabet = string.ascii_uppercase + string.digits
        return "1Z" + "".join(secrets.choice(alphabet) for _ in range(16))
    if carrier == "USPS":
        return "9400" + _digits(18)
    if carrier == "FedEx":
        return _digits(12)
    return _digits(10)  # DHL


def malformed_tracking_number(carrier: str) -> str:
    return {"UPS": "1Z12-BAD", "USPS": "94001", "FedEx": "FDX-12AB", "DHL": "DHL#123"}.get(
        carrier, "BAD-TRACKING"
    )


def _shipment(*, carrier: str, quantity: int, shipped_date: str, bad: str | None) -> dict:
    if bad == "unknown_carrier":
        number = _digits(14)
        return {
            "quantity": quantity,
            "carrier": "Acme Parcel Express",
            "tracking_number": number,
            "shipped_date": shipped_date,
            "tracking_url": f"https://acme-parcel.example/track/{number}",
        }
    number = (
        malformed_tracking_number(carrier)
        if bad == "malformed_tracking"
        else tracking_number(carrier)
    )
    return {
        "quantity": quantity,
        "carrier": carrier,
        "tracking_number": number,
        "shipped_date": shipped_date,
        "tracking_url": TRACKING_URLS[carrier].format(number),
    }


def _split(quantity: int, parts: int) -> list[int]:
    parts = max(1, min(parts, quantity))
    base, extra = divmod(quantity, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _positive_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SellerActionError(f"{what} must be an integer >= 1")
    return value


def _requested_lines(order: Order, spec: dict, *, allow_excess: bool) -> list[tuple[str, int, int]]:
    """(mp_line_number, quantity, split) for each line to act on; default: all pending."""
    pending = {s["mp_line_number"]: s["pending"]["quantity"] for s in line_summaries(order)}
    ordered = ordered_quantities(order)
    default_split = _positive_int(spec.get("split", 1), "split")
    lines = spec.get("lines")
    if lines is None:
        chosen = [(n, q, default_split) for n, q in pending.items() if n in ordered and q > 0]
        if not chosen:
            raise SellerActionError("nothing left to fulfill on this order", 409, "conflict")
        return chosen
    if not isinstance(lines, list) or not lines:
        raise SellerActionError("lines must be a non-empty list")
    chosen = []
    for line in lines:
        if not isinstance(line, dict):
            raise SellerActionError("each line must be an object")
        number = str(line.get("mp_line_number", ""))
        if number not in ordered:
            raise SellerActionError(f"order has no line {number!r}")
        quantity = _positive_int(line.get("quantity", pending.get(number, 0)), "quantity")
        if quantity > pending.get(number, 0) and not allow_excess:
            raise SellerActionError(
                f"line {number!r} has only {pending.get(number, 0)} pending", 409, "conflict"
            )
        chosen.append((number, quantity, _positive_int(line.get("split", default_split), "split")))
    return chosen


def _check_state(order: Order, spec: dict) -> None:
    if order.marketplace_state != "AWAITING_SHIPMENT" and not spec.get("force"):
        raise SellerActionError(
            f"order is {order.marketplace_state}; the seller fulfills AWAITING_SHIPMENT orders"
            " (pass force=true to do it anyway)",
            409,
            "conflict",
        )


def _save_seller_change(order: Order) -> None:
    now = clock.now()
    summaries = line_summaries(order)
    status = overall_status(summaries, ordered_quantities(order))
    order.fulfillment_status = STORED_NAMES[status]
    order.seller_updated_at = now
    order.sort_at = now
    order.acknowledged = True
    # Our choice: a seller's change answers the errors reported so far.
    order.has_errors = False
    order.save(
        update_fields=[
            "fulfillment",
            "fulfillment_status",
            "seller_updated_at",
            "sort_at",
            "acknowledged",
            "has_errors",
        ]
    )


def order_ship(*, order: Order, spec: dict) -> Order:
    bad = spec.get("bad")
    if bad is not None and bad not in BAD_KINDS:
        raise SellerActionError(f"bad must be one of {', '.join(BAD_KINDS)}")
    carrier = spec.get("carrier", "UPS")
    if carrier not in CARRIERS:
        raise SellerActionError(f"carrier must be one of {', '.join(CARRIERS)}")
    with transaction.atomic():
        order = Order.objects.select_for_update().get(id=order.id)
        _check_state(order, spec)
        today = clock.now().date()
        shipped_date = spec.get("shipped_date") or today.isoformat()
        if bad == "future_ship_date":
            shipped_date = (today + timedelta(days=7)).isoformat()
        records = order.fulfillment.setdefault("lines", {})
        if bad == "unknown_line":
            targets = [(f"UNKNOWN-{secrets.token_hex(3)}", 1, 1)]
        elif bad == "excess_quantity":
            chosen = _requested_lines(
                order, {**spec, "lines": spec.get("lines")}, allow_excess=True
            )
            number, quantity, split = chosen[0]
            targets = [(number, quantity + 1, split), *chosen[1:]]
        else:
            targets = _requested_lines(order, spec, allow_excess=False)
        for number, quantity, split in targets:
            record = records.setdefault(number, {"shipments": [], "cancellations": []})
            for part in _split(quantity, split):
                record["shipments"].append(
                    _shipment(carrier=carrier, quantity=part, shipped_date=shipped_date, bad=bad)
                )
        _save_seller_change(order)
    return order


def order_cancel(*, order: Order, spec: dict) -> Order:
    reason = spec.get("reason", "out_of_stock")
    if reason not in CANCELLATION_REASONS:
        raise SellerActionError(f"reason must be one of {', '.join(CANCELLATION_REASONS)}")
    with transaction.atomic():
        order = Order.objects.select_for_update().get(id=order.id)
        _check_state(order, spec)
        records = order.fulfillment.setdefault("lines", {})
        for number, quantity, _split_count in _requested_lines(order, spec, allow_excess=False):
            record = records.setdefault(number, {"shipments": [], "cancellations": []})
            record["cancellations"].append({"quantity": quantity, "reason": reason})
        _save_seller_change(order)
    return order


def order_acknowledge(*, order: Order) -> None:
    Order.objects.filter(id=order.id).update(acknowledged=True)


# -- auto-ship timer ---------------------------------------------------------------------

_thread: threading.Thread | None = None


def auto_ship_tick() -> int:
    seconds = switches.current.auto_ship_seconds
    if seconds is None:
        return 0
    cutoff = clock.now() - timedelta(seconds=seconds)
    due = Order.objects.filter(
        marketplace_state="AWAITING_SHIPMENT",
        fulfillment_status="UNFULFILLED",
        updated_at__lte=cutoff,
    ).order_by("updated_at")[:100]
    shipped = 0
    for order in due:
        try:
            order_ship(order=order, spec={"carrier": random.choice(CARRIERS)})
            shipped += 1
        except SellerActionError:
            continue
    return shipped


def _auto_ship_loop() -> None:
    while True:
        try:
            if auto_ship_tick() == 0:
                time.sleep(0.5)
        except Exception:
            log.exception("auto-ship tick failed")
            time.sleep(1)
        finally:
            close_old_connections()


def auto_ship_start() -> None:
    """Start the timer thread once per server process; it idles while auto-ship is off."""
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_auto_ship_loop, name="sandbox-auto-ship", daemon=True)
        _thread.start()
