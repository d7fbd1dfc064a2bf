"""Per-line quantities of a v2 order and its ``service_status``.

Our choice of words (the contract lists them): ``NEW`` imported and not confirmed;
``READY`` confirmed, AWAITING_SHIPMENT, lines left to settle; ``COMPLETE`` every line
shipped or cancelled (some shipped); ``CANCELLED`` cancelled by the marketplace or every
unit cancelled. A confirmed order that is PENDING (or SHIPPED with lines left) has none
(``""``) and matches no ``service_status`` filter.
"""

from sandbox.orders_v2.models import Cancellation, Package, V2Order


def line_totals(
    order: V2Order, *, except_package: int | None = None, except_cancellation: int | None = None
) -> dict[str, dict[str, int]]:
    """mp_line_number -> {"ordered", "shipped", "cancelled"} over every package and
    cancellation, released or not (lines the order lacks appear with ordered 0); a record
    being replaced is left out."""
    totals = {
        line["mp_line_number"]: {"ordered": line["quantity"], "shipped": 0, "cancelled": 0}
        for line in order.lines
    }
    packages = Package.objects.filter(order=order)
    if except_package is not None:
        packages = packages.exclude(id=except_package)
    for lines in packages.values_list("lines", flat=True):
        for line in lines:
            entry = totals.setdefault(
                line["mp_line_number"], {"ordered": 0, "shipped": 0, "cancelled": 0}
            )
            entry["shipped"] += line["quantity"]
    cancellations = Cancellation.objects.filter(order=order)
    if except_cancellation is not None:
        cancellations = cancellations.exclude(id=except_cancellation)
    for lines in cancellations.values_list("lines", flat=True):
        for line in lines:
            entry = totals.setdefault(
                line["mp_line_number"], {"ordered": 0, "shipped": 0, "cancelled": 0}
            )
            entry["cancelled"] += line["quantity"]
    return totals


def all_settled(totals: dict[str, dict[str, int]]) -> bool:
    ordered = [t for t in totals.values() if t["ordered"] > 0]
    return bool(ordered) and all(t["shipped"] + t["cancelled"] >= t["ordered"] for t in ordered)


def service_status(order: V2Order, totals: dict[str, dict[str, int]]) -> str:
    if order.normalized_marketplace_state == "CANCELLED":
        return "CANCELLED"
    if all_settled(totals):
        shipped = sum(t["shipped"] for t in totals.values())
        return "COMPLETE" if shipped else "CANCELLED"
    if order.confirmed_at is None:
        return "NEW"
    if order.normalized_marketplace_state == "AWAITING_SHIPMENT":
        return "READY"
    return ""


def service_status_refresh(order: V2Order) -> str:
    status = service_status(order, line_totals(order))
    if status != order.service_status:
        order.service_status = status
        V2Order.objects.filter(id=order.id).update(service_status=status)
    return status
