"""The dashboard's actions: call the owning app's service, then record who did it and how
it went (``StaffAction``), so the page can say so and the audit trail keeps it.

No transaction is wrapped around the call on purpose: the services queue their work with
``transaction.on_commit``; run outside an outer transaction the wake-up goes out as soon
as the service commits, and (with eager tasks, or a fast worker) the result read back
here is already the real one.
"""

from __future__ import annotations

import logging

from django.contrib.auth.models import User

from marketplace.dashboard.models import StaffAction
from marketplace.orders.models import Order, OrderSync
from marketplace.orders.services.push_recovery import (
    order_sync_retry,
    seller_failed_orders_retry,
)
from marketplace.sync.pull_now import seller_pull_queue
from marketplace.templatetags.display import format_time
from sellers.errors import ConnectionNotLive, ReauthorizationRequired, TokenRefreshUnavailable
from sellers.models import PlatformConnection, Seller
from sellers.services import connection_disconnect, connection_refresh

logger = logging.getLogger(__name__)

Kind = StaffAction.Kind


def _record(
    *,
    kind: str,
    actor: User,
    ok: bool,
    result: str,
    seller_id: int | None = None,
    order_id: int | None = None,
) -> StaffAction:
    return StaffAction.objects.create(
        kind=kind,
        actor=actor,
        actor_username=actor.get_username(),
        seller_id=seller_id,
        order_id=order_id,
        ok=ok,
        result=result[:500],
    )


def staff_order_retry(*, order: Order, actor: User) -> StaffAction:
    """Push one order again now (a failed one, usually)."""
    sync = order_sync_retry(order_id=order.id, actor=actor.get_username())
    sync = OrderSync.objects.get(pk=sync.pk)  # the push may already have run
    if sync.status == OrderSync.Status.SYNCED:
        result, ok = "Pushed: the platform has the current version of the order.", True
    elif sync.status == OrderSync.Status.FAILED:
        result, ok = f"The push failed again: {sync.last_error or 'no detail'}", False
    elif sync.status == OrderSync.Status.WAITING_FOR_CONNECTION:
        result, ok = "Not pushed: the seller's platform connection is not live.", False
    else:
        result, ok = f"Push queued (now {sync.get_status_display().lower()}).", True
    return _record(
        kind=Kind.ORDER_RETRY,
        actor=actor,
        ok=ok,
        result=result,
        seller_id=order.seller_id,
        order_id=order.id,
    )


def staff_seller_failed_retry(*, seller: Seller, actor: User) -> StaffAction:
    queued = seller_failed_orders_retry(seller_id=seller.id, actor=actor.get_username())
    still_failed = OrderSync.objects.filter(
        order__seller_id=seller.id, status=OrderSync.Status.FAILED
    ).count()
    result = f"Retried {queued} failed push{'es' if queued != 1 else ''}."
    if queued and still_failed:
        result += f" {still_failed} failed again."
    return _record(
        kind=Kind.SELLER_RETRY_FAILED,
        actor=actor,
        ok=queued > 0 and still_failed == 0,
        result=result if queued else "No failed pushes to retry.",
        seller_id=seller.id,
    )


def staff_connection_refresh(*, seller: Seller, actor: User) -> StaffAction:
    """Refresh the access token now. ``seen_generation`` makes it race-safe: if another
    worker changed the grant in the meantime, that refresh already did the job."""
    connection = PlatformConnection.objects.filter(seller=seller).first()
    ok = False
    if connection is None:
        result = "The seller has never connected."
    else:
        try:
            fresh = connection_refresh(
                connection_id=connection.id,
                force=True,
                seen_generation=connection.generation,
                actor=actor,
            )
        except ReauthorizationRequired as exc:
            result = f"The platform refused the authorization; the seller must reconnect. {exc}"
        except ConnectionNotLive:
            result = f"Not refreshed: the connection is {connection.get_state_display().lower()}."
        except TokenRefreshUnavailable as exc:
            result = f"The platform could not refresh now; try again later ({exc})."
        else:
            ok = True
            expires = fresh.access_token_expires_at
            result = "Connection renewed" + (
                f"; it renews again on its own before {format_time(expires)}." if expires else "."
            )
    return _record(
        kind=Kind.CONNECTION_REFRESH, actor=actor, ok=ok, result=result, seller_id=seller.id
    )


def staff_seller_pull(*, seller: Seller, actor: User) -> StaffAction:
    """Queue a pull of the seller's fulfillments now (the seller's portal has the same
    button, rate-limited: ``marketplace.portal.services``)."""
    queued = seller_pull_queue(seller=seller)
    result = queued.result
    if result.startswith("Not pulled"):
        result = "Not pulled: the seller's platform connection is not live."
    return _record(
        kind=Kind.SELLER_PULL, actor=actor, ok=queued.ok, result=result, seller_id=seller.id
    )


def staff_connection_disconnect(*, seller: Seller, actor: User) -> StaffAction:
    connection = PlatformConnection.objects.filter(seller=seller).first()
    if connection is None:
        return _record(
            kind=Kind.CONNECTION_DISCONNECT,
            actor=actor,
            ok=False,
            result="The seller has no connection.",
            seller_id=seller.id,
        )
    connection_disconnect(connection_id=connection.id, actor=actor)
    return _record(
        kind=Kind.CONNECTION_DISCONNECT,
        actor=actor,
        ok=True,
        result="Disconnected; the stored tokens were wiped.",
        seller_id=seller.id,
    )
