"""Reactions to other apps' signals (connected in OrdersConfig.ready)."""

from __future__ import annotations

from django.dispatch import receiver

from marketplace.orders.services.push_recovery import orders_release_for_seller
from sellers.models import PlatformConnection
from sellers.signals import connection_live


@receiver(connection_live, dispatch_uid="orders_release_on_connection_live")
def release_waiting_orders(
    sender: type[PlatformConnection], connection: PlatformConnection, **kwargs: object
) -> None:
    # Sent on commit of a (re)connect: orders that waited for the grant go out now.
    # The sweeper does the same for a signal that never arrived (a crash after commit).
    orders_release_for_seller(seller_id=connection.seller_id)
