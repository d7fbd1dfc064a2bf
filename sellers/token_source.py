"""The sellers app's side of the order client: a connection's grant as a ``TokenSource``,
and the order client built for a connection or a seller.

``marketplace.platform`` depends on nothing above it; it is handed this token source.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.views.decorators.debug import sensitive_variables

from marketplace.platform.order_source import OrderSourceClient
from sellers import vault
from sellers.errors import ConnectionNotLive
from sellers.models import PlatformConnection, Seller
from sellers.services import connection_access_token, connection_refresh


@dataclass(frozen=True)
class ConnectionTokens:
    """A connection's access token through the vault (``marketplace.platform.tokens``)."""

    connection_id: int

    @sensitive_variables()
    def access_token(self) -> str:
        """Raises ``ConnectionNotLive``, ``ReauthorizationRequired`` or
        ``TokenRefreshUnavailable`` (see ``connection_access_token``)."""
        return connection_access_token(connection_id=self.connection_id)

    @sensitive_variables()
    def refresh_after_unauthorized(self, *, rejected_token: str) -> None:
        """A forced refresh, unless the stored token is no longer the rejected one (another
        caller refreshed it). Raises ``ReauthorizationRequired`` when the grant is gone."""
        connection_refresh(
            connection_id=self.connection_id,
            force=True,
            stale_token_fingerprint=vault.token_fingerprint(rejected_token),
        )


def order_client_for(
    connection: PlatformConnection, *, hold_wait: float = 0.0
) -> OrderSourceClient:
    """The order client acting for ``connection``'s seller with its grant."""
    return OrderSourceClient(
        seller_id=connection.seller_id,
        tokens=ConnectionTokens(connection_id=connection.pk),
        hold_wait=hold_wait,
    )


def order_client_for_seller(seller: Seller) -> OrderSourceClient:
    """Raises ``ConnectionNotLive`` when the seller never connected."""
    connection = PlatformConnection.objects.filter(seller_id=seller.pk).first()
    if connection is None:
        raise ConnectionNotLive(f"seller {seller.pk} has no platform connection")
    return order_client_for(connection)
