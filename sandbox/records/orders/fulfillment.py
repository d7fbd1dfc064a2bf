"""Reading an order's fulfillment: per-line quantities, statuses and the JSON shapes.

An order stores the seller's shipments and cancellations per line number in
``Order.fulfillment = {"lines": {"<mp_line_number>": {"shipments": [], "cancellations": []}}}``.
Lines the order does not have may appear there (a "bad" fulfillment on request).
"""

from sandbox.common import switches
from sandbox.records.orders.contract_fields import placed_contract_fields
from sandbox.records.orders.models import Order

# Our choice: a line's status uses the same words as the order's fulfillment status.
PENDING = "PENDING"
PARTIAL = "PARTIALLY_FULFILLED"
COMPLETE = "COMPLETE"
# The listing filter's words for the same statuses.
FILTER_NAMES = {"UNFULFILLED": PENDING, "PARTIALLY_FULFILLED": PARTIAL, "COMPLETE": COMPLETE}
STORED_NAMES = {PENDING: "UNFULFILLED", PARTIAL: "PARTIALLY_FULFILLED", COMPLETE: "COMPLETE"}


def ordered_quantities(order: Order) -> dict[str, int]:
    return {
        str(line.get("mp_line_number")): int(line.get("quantity") or 0)
        for line in order.placed.get("order_lines", [])
    }


def line_records(order: Order) -> dict[str, dict]:
    return order.fulfillment.get("lines", {})


def line_summaries(order: Order) -> list[dict]:
    ordered = ordered_quantities(order)
    records = line_records(order)
    numbers = list(ordered) + [n for n in records if n not in ordered]
    summaries = []
    for number in numbers:
        record = records.get(number, {})
        shipments = record.get("shipments", [])
        cancellations = record.get("cancellations", [])
        shipped = sum(s["quantity"] for s in shipments)
        cancelled = sum(c["quantity"] for c in cancellations)
        pending = max(ordered.get(number, 0) - shipped - cancelled, 0)
        if pending == 0 and (shipped or cancelled or number in ordered):
            status = COMPLETE
        elif shipped or cancelled:
            status = PARTIAL
        else:
            status = PENDING
        summaries.append(
            {
                "mp_line_number": number,
                "status": status,
                "pending": {"quantity": pending},
                "shipments": shipments,
                "cancellations": cancellations,
            }
        )
    return summaries


def overall_status(summaries: list[dict], ordered: dict[str, int]) -> str:
    known = [s for s in summaries if s["mp_line_number"] in ordered]
    if known and all(s["status"] == COMPLETE for s in known):
        return COMPLETE
    if any(s["shipments"] or s["cancellations"] for s in summaries):
        return PARTIAL
    return PENDING


def fulfillments_json(order: Order) -> dict:
    summaries = line_summaries(order)
    return {
        "status": overall_status(summaries, ordered_quantities(order)),
        "is_marketplace_fulfilled": order.is_marketplace_fulfilled,
        "fulfillments": summaries,
    }


def order_status(order: Order, fulfillment_status: str) -> str:
    """Our mapping to the platform's order status words (the contract lists only the words)."""
    ordered = ordered_quantities(order)
    summaries = line_summaries(order)
    all_cancelled = all(
        sum(c["quantity"] for c in s["cancellations"]) >= ordered.get(s["mp_line_number"], 0)
        for s in summaries
        if s["mp_line_number"] in ordered
    )
    if order.marketplace_state == "CANCELLED" or (fulfillment_status == COMPLETE and all_cancelled):
        return "CANCELLED"
    if fulfillment_status == COMPLETE:
        return "COMPLETE" if order.marketplace_state == "SHIPPED" else "FULFILLED"
    if fulfillment_status == PARTIAL:
        return "IN_PROGRESS"
    if order.marketplace_state == "PENDING":
        return "PENDING"
    return "ORDERED"


def order_json(order: Order) -> dict:
    """The order as the contract shows it: the placed fields plus the four it adds."""
    fulfillments = fulfillments_json(order)
    body = {
        **placed_contract_fields(order.placed),
        "fulfillments": fulfillments["fulfillments"],
        "acknowledged": order.acknowledged,
        "status": order_status(order, fulfillments["status"]),
        "is_marketplace_fulfilled": order.is_marketplace_fulfilled,
    }
    if switches.current.additive_fields:
        # Timestamps the contract does not give: only for tests of the client's tolerance.
        body["imported_at"] = order.imported_at.isoformat()
        body["seller_updated_at"] = (
            order.seller_updated_at.isoformat() if order.seller_updated_at else None
        )
    return body
