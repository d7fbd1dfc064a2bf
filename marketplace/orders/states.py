"""Legal marketplace-state transitions (DESIGN.md).

``PENDING → AWAITING_SHIPMENT → SHIPPED``; ``PENDING | AWAITING_SHIPMENT → CANCELLED``.
SHIPPED and CANCELLED are final. SHIPPED is reached through settlement (every line
shipped or cancelled and no open validation problem), never through intake: the
marketplace must not tell the platform an order shipped before the seller's
fulfillment says so.
"""

from __future__ import annotations

from marketplace.orders.models import MarketplaceState as S

TRANSITIONS: dict[str, frozenset[str]] = {
    S.PENDING: frozenset({S.AWAITING_SHIPMENT, S.CANCELLED}),
    S.AWAITING_SHIPMENT: frozenset({S.SHIPPED, S.CANCELLED}),
    S.SHIPPED: frozenset(),
    S.CANCELLED: frozenset(),
}
# States intake may ask for; SHIPPED comes from settlement only.
INTAKE_TARGETS = frozenset({S.AWAITING_SHIPMENT, S.CANCELLED})
FINAL = frozenset({S.SHIPPED, S.CANCELLED})


def transition_allowed(current: str, requested: str) -> bool:
    return requested in TRANSITIONS.get(current, frozenset())
