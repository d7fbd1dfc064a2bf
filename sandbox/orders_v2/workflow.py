"""The seller's workflow: when the marketplace gets to see v2 packages and cancellations.

``each_shipment``: every package or cancellation is released as it is made.
``whole_order``: nothing is released until every line is shipped or cancelled; then all
of it at once. What is released is the marketplace-facing view of the order
(``Order.fulfillment``, read by ``GET /api/v1/orders/{n}/fulfillments`` and the
listing), rebuilt from the released records after every change, so a package edited or
deleted later shows as such. A change the marketplace can see bumps the order's
``seller_updated_at`` (the listing's ``seller_updated_after``).
"""

from sandbox.common import clock
from sandbox.orders_v2.dates import local_date
from sandbox.orders_v2.imports import event_add, seller_settings
from sandbox.orders_v2.models import EACH_SHIPMENT, Cancellation, Package, V2Order
from sandbox.orders_v2.status import all_settled, line_totals
from sandbox.records.orders.fulfillment import (
    STORED_NAMES,
    line_summaries,
    ordered_quantities,
    overall_status,
)
from sandbox.records.orders.models import Order


def _released_view(order: V2Order) -> dict[str, dict[str, list]]:
    lines: dict[str, dict[str, list]] = {}
    for package in Package.objects.filter(order=order, released_at__isnull=False).order_by("id"):
        for line in package.lines:
            record = lines.setdefault(
                line["mp_line_number"], {"shipments": [], "cancellations": []}
            )
            record["shipments"].append(
                {
                    "quantity": line["quantity"],
                    "carrier": package.carrier,
                    # A local delivery or pickup has no tracking (None, not "").
                    "tracking_number": package.tracking_number or None,
                    "shipped_date": local_date(package.shipped_date).isoformat(),
                    "tracking_url": package.tracking_url or None,
                }
            )
    for cancellation in Cancellation.objects.filter(
        order=order, released_at__isnull=False
    ).order_by("id"):
        for line in cancellation.lines:
            record = lines.setdefault(
                line["mp_line_number"], {"shipments": [], "cancellations": []}
            )
            record["cancellations"].append(
                {"quantity": line["quantity"], "reason": cancellation.reason}
            )
    return lines


def _release_due(order: V2Order) -> None:
    packages = Package.objects.filter(order=order, released_at__isnull=True)
    cancellations = Cancellation.objects.filter(order=order, released_at__isnull=True)
    if not packages.exists() and not cancellations.exists():
        return
    workflow = seller_settings(order.seller).workflow
    if workflow != EACH_SHIPMENT and not all_settled(line_totals(order)):
        return  # whole order: held until the last line is settled
    names = [f"package {p}" for p in packages.values_list("id", flat=True)] + [
        f"cancellation {c}" for c in cancellations.values_list("id", flat=True)
    ]
    now = clock.now()
    packages.update(released_at=now)
    cancellations.update(released_at=now)
    what = "whole order" if workflow != EACH_SHIPMENT else "as made"
    event_add(order, "released", f"to the marketplace ({what}): {', '.join(names)}", now)


def publish(order: V2Order) -> bool:
    """Release what the workflow allows and rebuild the marketplace's view; True if it changed."""
    _release_due(order)
    return view_rebuild(order, by_seller=True)


def view_rebuild(order: V2Order, *, by_seller: bool) -> bool:
    """Rebuild the marketplace's view from the released records; True if it changed.

    ``by_seller=False`` is a change made at the platform, not by the seller (the control
    API's drift): the view and its status change, but not ``seller_updated_at`` nor the
    listing's sort key, so ``seller_updated_after`` (and a cursor) never see it."""
    lines = _released_view(order)
    placed = Order.objects.select_for_update().get(id=order.order_id)
    if placed.fulfillment.get("lines", {}) == lines:
        return False
    placed.fulfillment = {"lines": lines}
    placed.fulfillment_status = STORED_NAMES[
        overall_status(line_summaries(placed), ordered_quantities(placed))
    ]
    fields = ["fulfillment", "fulfillment_status"]
    if by_seller:
        now = clock.now()
        placed.seller_updated_at = now
        placed.sort_at = now
        placed.acknowledged = True
        # Our choice: a seller's change answers the errors reported so far.
        placed.has_errors = False
        fields += ["seller_updated_at", "sort_at", "acknowledged", "has_errors"]
    placed.save(update_fields=fields)
    return True
