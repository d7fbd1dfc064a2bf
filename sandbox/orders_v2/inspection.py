"""A v2 order as the control API and the pages show it: everything, held packages included."""

from typing import Any

from sandbox.orders_v2 import serialize
from sandbox.orders_v2.models import V2Order
from sandbox.orders_v2.status import line_totals


def inspected_json(order: V2Order) -> dict[str, Any]:
    totals = line_totals(order)
    return {
        **serialize.order_json(order),
        "service_status": order.service_status,
        "seller": order.seller.username,
        "confirmed_at": order.confirmed_at.isoformat() if order.confirmed_at else None,
        "marketplace_state_changed_at": order.marketplace_state_changed_at.isoformat(),
        "lines": [{**line, **totals.get(line["mp_line_number"], {})} for line in order.lines],
        "fulfillments": [
            {**serialize.package_json(p), "released": p.released_at is not None}
            for p in order.packages.all()
        ],
        "cancellations": [
            {**serialize.cancellation_json(c), "released": c.released_at is not None}
            for c in order.cancellations.all()
        ],
        "events": [
            {"kind": e.kind, "at": e.at.isoformat(), "detail": e.detail} for e in order.events.all()
        ],
    }
