"""Shipping and cancelling by hand: the control API's ship/cancel (and the auto-ship timer).

There is one way shipments are made: these build v2 packages and cancellations and hand
them to ``orders_v2.packages`` (importing the order into v2 first if its scheduled import
has not happened yet), exactly as the v2 API does; the seller's workflow decides when
the marketplace sees them. Good packages carry tracking numbers valid for their carrier;
"bad" ones, on request, carry exactly the problem asked for, so the marketplace's
validation and error reports can be tested. The seller's own systems are simulated by a
separate process speaking the v2 API (``python -m sandbox.seller_sim``).
"""

import logging
import random
import secrets
import string
from datetime import date, timedelta

from sandbox.common import clock, switches
from sandbox.common.carriers import (
    CARRIERS,
    UNKNOWN_CARRIER,
    bad_tracking_number,
    tracking_number,
)
from sandbox.common.control import ControlError
from sandbox.common.loop import loop_start
from sandbox.orders_v2.dates import strict_datetime
from sandbox.orders_v2.imports import order_import
from sandbox.orders_v2.models import V2Order
from sandbox.orders_v2.packages import (
    CANCELLATION_REASONS,
    TRACKING_URLS,
    PackageError,
    cancellation_create,
    package_create,
)
from sandbox.orders_v2.status import line_totals
from sandbox.records.orders.fulfillment import fulfillments_json
from sandbox.records.orders.models import Order

__all__ = ["fulfillments_json"]

log = logging.getLogger(__name__)

BAD_KINDS = (
    "unknown_carrier",
    "bad_tracking_number",
    "excess_quantity",
    "unknown_line",
    "future_shipped_date",
)


class SellerActionError(ControlError):
    def __init__(self, message: str, status: int = 400, error: str = "bad_request") -> None:
        super().__init__(error, message, status)


def _digits(count: int) -> str:
    return "".join(secrets.choice(string.digits) for _ in range(count))


def _shipped_date(spec: dict, bad: str | None) -> str:
    """A v2 shipment date-time from the control body's date (default: sandbox today)."""
    today = clock.now().date()
    day = spec.get("shipped_date") or today.isoformat()
    if bad == "future_shipped_date":
        day = (today + timedelta(days=7)).isoformat()
    if strict_datetime(day) is not None:
        return day
    try:
        parsed = date.fromisoformat(str(day))
    except ValueError as exc:
        raise SellerActionError("shipped_date must be a date (YYYY-MM-DD)") from exc
    return f"{parsed.isoformat()}T12:00:00+00:00"


def _package_shipment(*, carrier: str, shipped_date: str, bad: str | None) -> dict:
    if bad == "unknown_carrier":
        number = _digits(14)
        return {
            "carrier": UNKNOWN_CARRIER,
            "tracking_number": number,
            "shipped_date": shipped_date,
            "tracking_url": f"https://acme-parcel.example/track/{number}",
        }
    number = (
        bad_tracking_number(carrier) if bad == "bad_tracking_number" else tracking_number(carrier)
    )
    return {
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


def _requested_lines(v2: V2Order, spec: dict, *, allow_excess: bool) -> list[tuple[dict, int, int]]:
    """(v2 line, quantity, split) for each line to act on; default: all pending."""
    totals = line_totals(v2)
    by_number = {line["mp_line_number"]: line for line in v2.lines}
    pending = {
        number: max(t["ordered"] - t["shipped"] - t["cancelled"], 0) for number, t in totals.items()
    }
    default_split = _positive_int(spec.get("split", 1), "split")
    lines = spec.get("lines")
    if lines is None:
        chosen = [
            (line, pending[number], default_split)
            for number, line in by_number.items()
            if pending.get(number, 0) > 0
        ]
        if not chosen:
            raise SellerActionError("nothing left to fulfill on this order", 409, "conflict")
        return chosen
    if not isinstance(lines, list) or not lines:
        raise SellerActionError("lines must be a non-empty list")
    chosen = []
    for item in lines:
        if not isinstance(item, dict):
            raise SellerActionError("each line must be an object")
        number = str(item.get("mp_line_number", ""))
        if number not in by_number:
            raise SellerActionError(f"order has no line {number!r}")
        quantity = _positive_int(item.get("quantity", pending.get(number, 0)), "quantity")
        if quantity > pending.get(number, 0) and not allow_excess:
            raise SellerActionError(
                f"line {number!r} has only {pending.get(number, 0)} pending", 409, "conflict"
            )
        split = _positive_int(item.get("split", default_split), "split")
        chosen.append((by_number[number], quantity, split))
    return chosen


def _v2_order(order: Order, spec: dict) -> V2Order:
    """The order's v2 record (imported now if the schedule has not yet), state checked."""
    if order.marketplace_state != "AWAITING_SHIPMENT" and not spec.get("force"):
        raise SellerActionError(
            f"order is {order.marketplace_state}; the seller fulfills AWAITING_SHIPMENT orders"
            " (pass force=true to do it anyway)",
            409,
            "conflict",
        )
    return order_import(order, why="imported for a control-API action")


def _package_lines(targets: list[tuple[dict, int, int]]) -> list[list[dict]]:
    """Packages for the targets: the n-th part of every line's split goes in package n."""
    packages: list[list[dict]] = []
    for line, quantity, split in targets:
        for index, part in enumerate(_split(quantity, split)):
            while len(packages) <= index:
                packages.append([])
            packages[index].append(
                {
                    "line_id": line.get("id"),
                    "mp_line_number": line["mp_line_number"],
                    "quantity": part,
                }
            )
    return packages


def order_ship(*, order: Order, spec: dict) -> Order:
    """Ship through the v2 path (``orders_v2.packages``): one v2 package per split part."""
    bad = spec.get("bad")
    if bad is not None and bad not in BAD_KINDS:
        raise SellerActionError(f"bad must be one of {', '.join(BAD_KINDS)}")
    carrier = spec.get("carrier", "UPS")
    if carrier not in CARRIERS:
        raise SellerActionError(f"carrier must be one of {', '.join(CARRIERS)}")
    v2 = _v2_order(order, spec)
    shipped_date = _shipped_date(spec, bad)
    if bad == "unknown_line":
        unknown = {"id": None, "mp_line_number": f"UNKNOWN-{secrets.token_hex(3)}"}
        targets = [(unknown, 1, 1)]
    elif bad == "excess_quantity":
        chosen = _requested_lines(v2, spec, allow_excess=True)
        line, quantity, split = chosen[0]
        targets = [(line, quantity + 1, split), *chosen[1:]]
    else:
        targets = _requested_lines(v2, spec, allow_excess=False)
    checked = bad not in ("unknown_line", "excess_quantity")
    try:
        for lines in _package_lines(targets):
            package_create(
                v2,
                lines,
                _package_shipment(carrier=carrier, shipped_date=shipped_date, bad=bad),
                force=bool(spec.get("force")),
                check_quantities=checked,
                source="control API",
            )
    except PackageError as exc:
        raise SellerActionError(str(exc), 409 if exc.status == 409 else 400) from exc
    order.refresh_from_db()
    return order


def order_cancel(*, order: Order, spec: dict) -> Order:
    reason = spec.get("reason", "out_of_stock")
    if reason not in CANCELLATION_REASONS:
        raise SellerActionError(f"reason must be one of {', '.join(CANCELLATION_REASONS)}")
    v2 = _v2_order(order, spec)
    lines = [
        {"line_id": line["id"], "mp_line_number": line["mp_line_number"], "quantity": quantity}
        for line, quantity, _split_count in _requested_lines(v2, spec, allow_excess=False)
    ]
    try:
        cancellation_create(v2, lines, reason, force=bool(spec.get("force")), source="control API")
    except PackageError as exc:
        raise SellerActionError(str(exc), 409 if exc.status == 409 else 400) from exc
    order.refresh_from_db()
    return order


def order_acknowledge(*, order: Order) -> None:
    Order.objects.filter(id=order.id).update(acknowledged=True)


# -- auto-ship timer ---------------------------------------------------------------------


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


def auto_ship_start() -> None:
    """Start the timer loop once per server process; it idles while auto-ship is off."""
    loop_start("sandbox-auto-ship", auto_ship_tick, pause_seconds=0.5, again_if_busy=True)
