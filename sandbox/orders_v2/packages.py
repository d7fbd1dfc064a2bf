"""Confirming, shipping packages and cancelling units of a v2 order: the one code path for
every shipment the sandbox makes (the v2 API, the control API's ship/cancel, the pages).

Each change runs in one transaction holding the v2 order's row, records an event, then
lets the workflow publish (``workflow.publish``) and refreshes ``service_status``.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from sandbox.common import clock
from sandbox.orders_v2.dates import strict_datetime
from sandbox.orders_v2.imports import event_add
from sandbox.orders_v2.models import Cancellation, Package, V2Order
from sandbox.orders_v2.status import line_totals, service_status_refresh
from sandbox.orders_v2.workflow import publish

CANCELLATION_REASONS = (
    "customer_cancelled",
    "unable_to_ship",
    "out_of_stock",
    "price_error",
    "tax_error",
    "shipping_price_error",
    "other",
)
TRACKING_URLS = {
    "UPS": "https://www.ups.com/track?tracknum={}",
    "USPS": "https://tools.usps.com/go/TrackConfirmAction?tLabels={}",
    "FedEx": "https://www.fedex.com/fedextrack/?trknbr={}",
    "DHL": "https://www.dhl.com/global-en/home/tracking.html?tracking-id={}",
}


@dataclass
class PackageError(Exception):
    """A refused change: status, message and the body paths at fault."""

    status: int
    message: str
    fields: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


def tracking_url(carrier: str, number: str) -> str | None:
    template = TRACKING_URLS.get(carrier)
    return template.format(number) if template else None


def _int_at_least_one(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def lines_parse(order: V2Order, raw: object, key: str) -> list[dict[str, Any]]:
    """``[{"line_id", "quantity"}]`` from a request body, checked against the order's lines."""
    if not isinstance(raw, list) or not raw:
        raise PackageError(
            400, f"{key} must be a non-empty list", {key: "required, a non-empty list"}
        )
    by_id = {line["id"]: line for line in order.lines}
    parsed, problems = [], {}
    for index, item in enumerate(raw):
        path = f"{key}[{index}]"
        if not isinstance(item, dict):
            problems[path] = "must be an object with line_id and quantity"
            continue
        line = by_id.get(str(item.get("line_id")))
        if line is None:
            problems[f"{path}.line_id"] = f"the order has no line {item.get('line_id')!r}"
        if not _int_at_least_one(item.get("quantity")):
            problems[f"{path}.quantity"] = "must be an integer >= 1"
        if line is not None and _int_at_least_one(item.get("quantity")):
            parsed.append(
                {
                    "line_id": line["id"],
                    "mp_line_number": line["mp_line_number"],
                    "quantity": item["quantity"],
                }
            )
    if problems:
        raise PackageError(
            400, "invalid lines: " + "; ".join(f"{k}: {v}" for k, v in problems.items()), problems
        )
    return parsed


def _over_quantity(
    order: V2Order, lines: list[dict[str, Any]], key: str, *, kind: str, **replacing: int
) -> None:
    """400 naming the line when shipped + cancelled would exceed what was ordered
    (``except_package``/``except_cancellation``: the record this change replaces)."""
    totals = line_totals(order, **replacing)
    asked: dict[str, int] = {}
    for line in lines:
        asked[line["mp_line_number"]] = asked.get(line["mp_line_number"], 0) + line["quantity"]
    problems = {}
    for index, line in enumerate(lines):
        number = line["mp_line_number"]
        total = totals.get(number, {"ordered": 0, "shipped": 0, "cancelled": 0})
        left = total["ordered"] - total["shipped"] - total["cancelled"]
        if asked.get(number, 0) > left:
            problems[f"{key}[{index}].quantity"] = (
                f"line {line['line_id']} (marketplace line {number}): {total['ordered']} ordered, "
                f"{total['shipped']} shipped, {total['cancelled']} cancelled, {left} left; "
                f"{asked[number]} more to {kind} is too many"
            )
            asked[number] = 0  # name each line once
    if problems:
        raise PackageError(400, "over quantity: " + "; ".join(problems.values()), problems)


def _locked(order: V2Order) -> V2Order:
    return V2Order.objects.select_related("order", "seller").select_for_update().get(id=order.id)


def _state_check(
    order: V2Order,
    *,
    force: bool,
    rule: str = "only AWAITING_SHIPMENT orders are fulfilled or cancelled",
) -> None:
    state = order.order.marketplace_state
    if state != "AWAITING_SHIPMENT" and not force:
        raise PackageError(409, f"the order is {state} at the marketplace: {rule}")


CHANGE_RULE = "packages and cancellations change only while the order is AWAITING_SHIPMENT"


def _after_change(order: V2Order) -> None:
    publish(order)
    service_status_refresh(order)


def _changed(order: V2Order, change: Callable[[V2Order], Any]) -> Any:
    with transaction.atomic():
        locked = _locked(order)
        result = change(locked)
        _after_change(locked)
    return result


def order_confirm(order: V2Order, merchant_order_number: str | None) -> V2Order:
    def change(locked: V2Order) -> V2Order:
        if locked.confirmed_at is not None:
            raise PackageError(409, f"order {locked.id} was already confirmed")
        locked.confirmed_at = clock.now()
        locked.merchant_order_number = merchant_order_number or ""
        locked.save(update_fields=["confirmed_at", "merchant_order_number"])
        event_add(locked, "confirmed", f"merchant order number {merchant_order_number or '(none)'}")
        type(locked.order).objects.filter(id=locked.order_id).update(acknowledged=True)
        return locked

    return _changed(order, change)


def shipment_parse(raw: object) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise PackageError(400, "shipment must be an object", {"shipment": "required, an object"})
    problems = {}
    if strict_datetime(raw.get("shipped_date")) is None:
        problems["shipment.shipped_date"] = (
            "RFC 3339 date-time with an offset, no fractional seconds"
        )
    for key in ("carrier", "tracking_number"):
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip() or len(value) > 100:
            problems[f"shipment.{key}"] = "required, a non-empty string (at most 100 characters)"
    if problems:
        raise PackageError(
            400,
            "invalid shipment: " + "; ".join(f"{k}: {v}" for k, v in problems.items()),
            problems,
        )
    return {
        "shipped_date": raw["shipped_date"],
        "carrier": raw["carrier"],
        "tracking_number": raw["tracking_number"],
    }


def package_create(
    order: V2Order,
    lines: list[dict[str, Any]],
    shipment: dict[str, Any],
    *,
    force: bool = False,
    check_quantities: bool = True,
    source: str = "v2 API",
) -> Package:
    """One package. ``force``/``check_quantities`` are for the control API's deliberately bad
    shipments only; the v2 API always checks."""

    def change(locked: V2Order) -> Package:
        _state_check(locked, force=force)
        if check_quantities:
            _over_quantity(locked, lines, "fulfillment_lines", kind="ship")
        now = clock.now()
        url = shipment.get("tracking_url") or tracking_url(
            shipment["carrier"], shipment["tracking_number"]
        )
        package = Package.objects.create(
            order=locked,
            lines=lines,
            shipped_date=shipment["shipped_date"],
            carrier=shipment["carrier"],
            tracking_number=shipment["tracking_number"],
            tracking_url=url or "",
            created_at=now,
            updated_at=now,
        )
        units = ", ".join(f"{line['quantity']} of line {line['mp_line_number']}" for line in lines)
        event_add(
            locked,
            "fulfilled",
            f"package {package.id} ({source}): {units}; "
            f"{package.carrier} {package.tracking_number}",
            now,
        )
        return package

    return _changed(order, change)


def package_update(
    package: Package,
    lines: list[dict[str, Any]],
    shipment: dict[str, Any],
    *,
    source: str = "v2 API",
) -> Package:
    """Replace a package's units and shipment (``PUT …/fulfillments/{fid}``): only while
    the order is AWAITING_SHIPMENT (409 otherwise), within the ordered quantities (the
    package's own units do not count against it: 400 naming the line otherwise). What the
    marketplace sees of a released package changes with it."""

    def change(locked: V2Order) -> Package:
        current = Package.objects.filter(id=package.id, order=locked).first()
        if current is None:  # deleted meanwhile
            raise PackageError(404, f"fulfillment {package.id!r} not found")
        _state_check(locked, force=False, rule=CHANGE_RULE)
        _over_quantity(locked, lines, "fulfillment_lines", kind="ship", except_package=current.id)
        current.lines = lines
        current.shipped_date = shipment["shipped_date"]
        current.carrier = shipment["carrier"]
        current.tracking_number = shipment["tracking_number"]
        current.tracking_url = tracking_url(shipment["carrier"], shipment["tracking_number"]) or ""
        current.updated_at = clock.now()
        current.save()
        units = ", ".join(f"{line['quantity']} of line {line['mp_line_number']}" for line in lines)
        event_add(
            locked,
            "fulfillment_updated",
            f"package {current.id} ({source}): {units}; "
            f"{current.carrier} {current.tracking_number}",
        )
        return current

    return _changed(package.order, change)


def package_delete(package: Package, *, source: str = "v2 API") -> None:
    """Delete a package (``DELETE …/fulfillments/{fid}``): only while the order is
    AWAITING_SHIPMENT (409 otherwise); a released one disappears from what the
    marketplace sees, and its units are left to ship again."""

    def change(locked: V2Order) -> None:
        _state_check(locked, force=False, rule=CHANGE_RULE)
        if not Package.objects.filter(id=package.id, order=locked).delete()[0]:
            raise PackageError(404, f"fulfillment {package.id!r} not found")
        event_add(locked, "fulfillment_deleted", f"package {package.id} ({source})")

    _changed(package.order, change)


def reason_check(reason: object) -> str:
    if reason not in CANCELLATION_REASONS:
        raise PackageError(
            400,
            f"reason must be one of {', '.join(CANCELLATION_REASONS)}",
            {"reason": "required, a known reason"},
        )
    return str(reason)


def cancellation_create(
    order: V2Order,
    lines: list[dict[str, Any]],
    reason: str,
    *,
    force: bool = False,
    source: str = "v2 API",
) -> Cancellation:
    def change(locked: V2Order) -> Cancellation:
        _state_check(locked, force=force)
        _over_quantity(locked, lines, "cancellation_lines", kind="cancel")
        now = clock.now()
        cancellation = Cancellation.objects.create(
            order=locked, lines=lines, reason=reason, created_at=now, updated_at=now
        )
        units = ", ".join(f"{line['quantity']} of line {line['mp_line_number']}" for line in lines)
        event_add(
            locked,
            "cancelled",
            f"cancellation {cancellation.id} ({source}): {units} ({reason})",
            now,
        )
        return cancellation

    return _changed(order, change)


def cancellation_update(
    cancellation: Cancellation, lines: list[dict[str, Any]], reason: str
) -> Cancellation:
    def change(locked: V2Order) -> Cancellation:
        current = Cancellation.objects.get(id=cancellation.id, order=locked)
        _state_check(locked, force=False, rule=CHANGE_RULE)
        _over_quantity(
            locked, lines, "cancellation_lines", kind="cancel", except_cancellation=current.id
        )
        current.lines = lines
        current.reason = reason
        current.updated_at = clock.now()
        current.save()
        event_add(locked, "cancellation_updated", f"cancellation {current.id} ({reason})")
        return current

    return _changed(cancellation.order, change)


def cancellation_delete(cancellation: Cancellation) -> None:
    def change(locked: V2Order) -> None:
        _state_check(locked, force=False, rule=CHANGE_RULE)
        Cancellation.objects.filter(id=cancellation.id, order=locked).delete()
        event_add(locked, "cancellation_deleted", f"cancellation {cancellation.id}")

    _changed(cancellation.order, change)
