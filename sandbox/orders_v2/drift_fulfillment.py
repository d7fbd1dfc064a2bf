"""Drift of a line's shipments: dropped or altered at the platform, as a support action
would, without the seller's update time (``seller_updated_at``) moving.

A shipment is named as ``GET /orders/{n}/fulfillments`` lists it: the line's
``mp_line_number`` and its position in that line's ``shipments`` (``shipment``, from 0;
the last one when left out). The seller's records change with it (the v2 package behind
the shipment), so no later publish brings the old shipment back; an order with no v2
packages behind its shipments (the history seed's) has its view edited in place.
"""

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from sandbox.common.control import ControlError
from sandbox.orders_v2.imports import event_add
from sandbox.orders_v2.models import Package, V2Order
from sandbox.orders_v2.packages import tracking_url
from sandbox.orders_v2.status import service_status_refresh
from sandbox.orders_v2.workflow import view_rebuild
from sandbox.records.orders.fulfillment import (
    STORED_NAMES,
    line_summaries,
    ordered_quantities,
    overall_status,
)
from sandbox.records.orders.models import Order

SHIPMENT_CHANGES = ("tracking_number", "carrier", "quantity")


@dataclass(frozen=True)
class ShipmentDrift:
    """What changed: the target's name and the shipment before and after (None: dropped)."""

    target: str
    before: dict[str, Any]
    after: dict[str, Any] | None


def _selected(order: Order, body: dict) -> tuple[str, int, dict[str, Any]]:
    """(line number, shipment index, the shipment as the marketplace sees it)."""
    number = body.get("mp_line_number")
    if not isinstance(number, str) or not number:
        raise ControlError("bad_request", "mp_line_number (non-empty string) is required", 400)
    shipments = order.fulfillment.get("lines", {}).get(number, {}).get("shipments", [])
    if not shipments:
        raise ControlError("not_found", f"line {number!r} has no shipment", 404)
    index = body.get("shipment", len(shipments) - 1)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(shipments):
        raise ControlError(
            "bad_request", f"shipment must be an index from 0 to {len(shipments) - 1}", 400
        )
    return number, index, dict(shipments[index])


def _changes(body: dict) -> dict[str, Any]:
    changes = {key: body[key] for key in SHIPMENT_CHANGES if key in body}
    if not changes:
        raise ControlError(
            "bad_request", f"name at least one of {', '.join(SHIPMENT_CHANGES)} to change", 400
        )
    for key in ("tracking_number", "carrier"):
        if key in changes and (not isinstance(changes[key], str) or not changes[key].strip()):
            raise ControlError("bad_request", f"{key} must be a non-empty string", 400)
    quantity = changes.get("quantity")
    if "quantity" in changes and (
        isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1
    ):
        raise ControlError("bad_request", "quantity must be an integer >= 1", 400)
    return changes


def _package_entries(v2: V2Order, number: str) -> list[tuple[Package, int]]:
    """The released (package, line entry) pairs behind a line's shipments, in the order the
    marketplace's view lists them (``workflow._released_view``)."""
    pairs = []
    for package in Package.objects.filter(order=v2, released_at__isnull=False).order_by("id"):
        for position, line in enumerate(package.lines):
            if line["mp_line_number"] == number:
                pairs.append((package, position))
    return pairs


def _package_change(package: Package, position: int, changes: dict[str, Any] | None) -> None:
    """Apply ``changes`` to one line entry of a package; None drops the entry (and the
    package when nothing is left in it). Carrier and tracking belong to the package: every
    line it carries shows them changed."""
    if changes is None:
        del package.lines[position]
        if not package.lines:
            package.delete()
            return
    else:
        if "quantity" in changes:
            package.lines[position]["quantity"] = changes["quantity"]
        package.carrier = changes.get("carrier", package.carrier)
        package.tracking_number = changes.get("tracking_number", package.tracking_number)
        if "carrier" in changes or "tracking_number" in changes:
            package.tracking_url = tracking_url(package.carrier, package.tracking_number) or ""
    package.save()


def _view_change(order: Order, number: str, index: int, changes: dict[str, Any] | None) -> None:
    """Edit the marketplace's view in place (no v2 packages behind it)."""
    shipments = order.fulfillment["lines"][number]["shipments"]
    if changes is None:
        del shipments[index]
    else:
        shipments[index].update(changes)
        if "carrier" in changes or "tracking_number" in changes:
            shipment = shipments[index]
            shipment["tracking_url"] = tracking_url(
                shipment["carrier"], shipment["tracking_number"] or ""
            )
    order.fulfillment_status = STORED_NAMES[
        overall_status(line_summaries(order), ordered_quantities(order))
    ]
    order.save(update_fields=["fulfillment", "fulfillment_status"])


def shipment_drift(order: Order, body: dict, *, drop: bool) -> ShipmentDrift:
    """Drop (``drop``) or alter one shipment of a line; the seller's update time stays."""
    changes = None if drop else _changes(body)
    with transaction.atomic():
        order = Order.objects.select_for_update().get(id=order.id)
        number, index, before = _selected(order, body)
        v2 = V2Order.objects.select_for_update().filter(order=order).first()
        pairs = _package_entries(v2, number) if v2 is not None else []
        if v2 is not None and len(pairs) == len(order.fulfillment["lines"][number]["shipments"]):
            package, position = pairs[index]
            _package_change(package, position, changes)
            what = "dropped" if drop else f"altered ({', '.join(sorted(changes or {}))})"
            event_add(v2, "platform_drift", f"package {package.id} line {number}: {what}")
            view_rebuild(v2, by_seller=False)
            service_status_refresh(v2)
            order.refresh_from_db()
        else:
            _view_change(order, number, index, changes)
    shipments = order.fulfillment.get("lines", {}).get(number, {}).get("shipments", [])
    after = None if drop else shipments[index]
    return ShipmentDrift(f"line {number} shipment {index}", before, after)
