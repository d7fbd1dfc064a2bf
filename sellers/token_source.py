"""The sellers app's side of the order client: a connection's grant as a ``TokenSource``,
and the order client built for a connection or a seller.

``marketplace.platform`` depends on nothing above it; it is handed this token source.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
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


# Order clients kept across push batches (``order_client_kept``), per process.
CLIENTS_KEPT = 1024
_Key = tuple[int, int, int, datetime | None, str]
_kept: OrderedDict[_Key, OrderSourceClient] = OrderedDict()
_kept_lock = threading.Lock()


def order_client_kept(connection: PlatformConnection) -> OrderSourceClient:
    """``order_client_for(connection)``, the same client again while the grant is unchanged.

    A client reuses the token it read for ``TOKEN_REUSE_SECONDS``; a new client per push
    batch read it again every batch (a query per seller per batch, ~3 % of a push's CPU).
    The key is the connection as the caller just read it: every change to the grant
    (refresh, disconnect, loss, reconnect) bumps ``generation``, and a token's expiry
    changes with it, so a changed grant gets a new client that reads the token afresh.
    """
    key = (
        connection.pk,
        connection.seller_id,
        connection.generation,
        connection.access_token_expires_at,
        settings.PLATFORM_BASE_URL,  # the client calls the platform it was made for
    )
    with _kept_lock:
        client = _kept.get(key)
        if client is not None:
            _kept.move_to_end(key)
            return client
        client = _kept[key] = order_client_for(connection)
        while len(_kept) > CLIENTS_KEPT:
            _kept.popitem(last=False)
        return client


def order_client_for_seller(seller: Seller) -> OrderSourceClient:
    """Raises ``ConnectionNotLive`` when the seller never connected."""
    connection = PlatformConnection.objects.filter(seller_id=seller.pk).first()
    if connection is None:
        raise ConnectionNotLive(f"seller {seller.pk} has no platform connection")
    return order_client_for(connection)
