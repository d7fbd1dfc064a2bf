"""The three kinds of v2 fulfillment and how each is kept as a package."""

from typing import Any

from sandbox.orders_v2.dates import strict_datetime
from sandbox.orders_v2.models import Package
from sandbox.orders_v2.packages import PackageError, shipment_parse

# A fulfillment is a Shipment, a LocalDelivery or a Pickup (the reference's
# post-fulfillments; the stored copy does not show the last two's fields, so ours: a local
# delivery ``{"delivered_date", "carrier"?}``, a pickup ``{"picked_up_date"}``). Either is kept
# as a package without a tracking number, its carrier the seller's courier or
# LOCAL_DELIVERY / PICKUP: what the marketplace sees is a shipment line with that carrier
# and no tracking.
FULFILLMENT_TYPES = ("shipment", "local_delivery", "pickup")
NO_PARCEL_CARRIERS = {"local_delivery": "LOCAL_DELIVERY", "pickup": "PICKUP"}
_DELIVERY_KEYS = {
    "local_delivery": frozenset({"delivered_date", "carrier"}),
    "pickup": frozenset({"picked_up_date"}),
}
_DELIVERY_DATE = {"local_delivery": "delivered_date", "pickup": "picked_up_date"}


def fulfillment_parse(body: dict) -> dict[str, Any]:
    """The package's shipment fields from a v2 fulfillment body of any of the three types."""
    kind = body.get("fulfillment_type")
    if kind not in FULFILLMENT_TYPES:
        choices = ", ".join(FULFILLMENT_TYPES)
        raise PackageError(
            400, f"fulfillment_type must be one of {choices}", {"fulfillment_type": choices}
        )
    for other in FULFILLMENT_TYPES:
        if other != kind and other in body:
            raise PackageError(400, f"{other} given for a {kind}", {other: "unknown field"})
    if kind == "shipment":
        return shipment_parse(body.get("shipment"))
    raw = body.get(kind)
    if not isinstance(raw, dict):
        raise PackageError(400, f"{kind} must be an object", {kind: "required, an object"})
    problems = {f"{kind}.{key}": "unknown field" for key in sorted(set(raw) - _DELIVERY_KEYS[kind])}
    date_key = _DELIVERY_DATE[kind]
    if strict_datetime(raw.get(date_key)) is None:
        problems[f"{kind}.{date_key}"] = "RFC 3339 date-time with an offset, no fractional seconds"
    carrier = raw.get("carrier", NO_PARCEL_CARRIERS[kind])
    if not isinstance(carrier, str) or not carrier.strip() or len(carrier) > 100:
        problems[f"{kind}.carrier"] = "a non-empty string (at most 100 characters)"
    if problems:
        message = f"invalid {kind}: " + "; ".join(f"{k}: {v}" for k, v in problems.items())
        raise PackageError(400, message, problems)
    return {"shipped_date": raw[date_key], "carrier": carrier, "tracking_number": ""}


def fulfillment_type_of(package: Package) -> str:
    """A shipment always has a tracking number; a package without one is a pickup or a
    local delivery."""
    if package.tracking_number:
        return "shipment"
    return "pickup" if package.carrier == NO_PARCEL_CARRIERS["pickup"] else "local_delivery"
