"""How a simulated seller behaves: delays, packages, cancellations, bad data."""

from dataclasses import dataclass, fields, replace
from typing import Any

BAD_KINDS = ("unknown_carrier", "bad_tracking_number", "future_shipped_date")


@dataclass(frozen=True)
class Behaviour:
    # Seconds between seeing an order READY and shipping it.
    ship_delay_seconds: float = 2.0
    # Packages per order (fewer when the order has fewer units left).
    packages: int = 1
    # Share of orders with some units cancelled (never every unit).
    cancel_rate: float = 0.0
    # Share of orders whose first package carries deliberately bad shipment data.
    bad_rate: float = 0.0
    # Paused: keeps its token and listings, confirms and ships nothing.
    paused: bool = False
    # Returns: the seller reads them (v2 GET /returns) and decides each one once.
    handle_returns: bool = True
    # Share of returns awaiting authorization it refuses (the others it authorizes). Under
    # reading A of ``return_refusal`` a refusal has no state: the return is left unauthorized.
    return_reject_rate: float = 0.1
    # Seconds from authorizing a return to refunding it (the parcel "arrives").
    return_arrival_seconds: float = 5.0
    # Share of the orders it ships that get a refund of a shipped line on its own.
    seller_refund_rate: float = 0.0
    # Share of those refunds that take more than the line's cost (the marketplace refuses).
    over_refund_rate: float = 0.3
    # Seconds from shipping an order to refunding a line of it.
    seller_refund_delay_seconds: float = 3.0
    # Share of refunds the marketplace paused (errors reported) that it corrects: each line
    # cut to what the buyer paid, and the refund is CREATED again. The others stay PAUSED.
    paused_refund_fix_rate: float = 1.0
    # Seconds from seeing a refund paused to correcting it.
    paused_refund_fix_seconds: float = 2.0

    def with_overrides(self, overrides: dict[str, Any]) -> "Behaviour":
        known = {f.name: f.type for f in fields(self)}
        picked = {k: v for k, v in overrides.items() if k in known and v is not None}
        return replace(self, **picked)
