"""Bulk data for the dashboard and portal tests: sellers in every connection state, orders in
every sync status, lines, shipments, cancellations, problems, history, calls and staff actions.

Everything goes through ``bulk_create`` so a few hundred orders cost well under a second.
No tokens are stored: the pages never need them, and secrets stay out of fixtures.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.utils import timezone

from marketplace.dashboard.models import StaffAction
from marketplace.orders.models import (
    LineCancellation,
    Order,
    OrderLine,
    OrderSync,
    Shipment,
    SyncEvent,
    ValidationProblem,
)
from marketplace.platform.models import PlatformCall
from marketplace.sync.models import SellerSync
from sellers.models import ConnectionEvent, PlatformConnection, Seller

STATES = [
    PlatformConnection.State.CONNECTED,
    PlatformConnection.State.NEEDS_REAUTH,
    PlatformConnection.State.DISCONNECTED,
    PlatformConnection.State.NOT_CONNECTED,
]
STATUSES = list(OrderSync.Status.values)
PASSWORD = "pages-pass-123"


@dataclass
class World:
    sellers: list[Seller]
    orders: list[Order]

    def seller_with_orders(self) -> Seller:
        return self.orders[0].seller

    def order_with_everything(self) -> Order:
        return self.orders[0]


def build_world(
    *, sellers: int, orders: int, prefix: str = "w", staff_actor: object | None = None
) -> World:
    """``sellers`` sellers (the first with a password, for signing in) and ``orders`` orders
    spread over them, each order with 2 lines, a shipment, a cancellation, a problem, three
    history events and three platform calls."""
    now = timezone.now()
    users_model = get_user_model()
    users = users_model.objects.bulk_create(
        [users_model(username=f"{prefix}-seller-{i}", password="!") for i in range(sellers)]
    )
    users[0].set_password(PASSWORD)
    users[0].save(update_fields=["password"])
    seller_rows = Seller.objects.bulk_create(
        [
            Seller(user=user, display_name=f"Shop {prefix.upper()} {i:03d}")
            for i, user in enumerate(users)
        ]
    )
    PlatformConnection.objects.bulk_create(
        [
            PlatformConnection(
                seller=seller,
                state=STATES[i % len(STATES)],
                access_token_expires_at=now + timedelta(minutes=30 + i),
                refresh_token_expires_at=now + timedelta(days=10 + i * 5),
                connected_at=now - timedelta(days=3),
                last_error="invalid_grant" if STATES[i % len(STATES)] == "needs_reauth" else "",
            )
            for i, seller in enumerate(seller_rows)
            # Every fifth seller never connected at all: no row.
            if i % 5 != 4
        ]
    )
    SellerSync.objects.bulk_create(
        [
            SellerSync(
                seller=seller,
                last_success_at=now - timedelta(minutes=5 + i),
                last_started_at=now - timedelta(minutes=5 + i),
                last_error="PlatformUnavailable: 503" if i % 7 == 3 else "",
            )
            for i, seller in enumerate(seller_rows)
        ]
    )
    ConnectionEvent.objects.bulk_create(
        [
            ConnectionEvent(seller=seller, kind=kind, detail=f"{kind} for the test")
            for seller in seller_rows
            for kind in (ConnectionEvent.Kind.CONNECTED, ConnectionEvent.Kind.REFRESHED)
        ]
    )
    order_rows = Order.objects.bulk_create(
        [
            Order(
                mp_order_number=f"{prefix.upper()}-{i:05d}",
                seller=seller_rows[i % sellers],
                state=Order.State.AWAITING_SHIPMENT,
                sales_channel="EU",
                purchase_date=now - timedelta(days=1),
                currency="EUR",
                customer_full_name="Ada Lovelace",
                ship_full_name="Ada Lovelace",
                ship_address1="12 Analytical Row",
                ship_city="London",
                ship_country_code="GBR",
                intake_fingerprint=f"{i:064d}",
                fulfillment_status="PARTIALLY_FULFILLED",
            )
            for i in range(orders)
        ]
    )
    OrderSync.objects.bulk_create(
        [
            OrderSync(
                order=order,
                status=STATUSES[i % len(STATUSES)],
                desired_version=1,
                pushed_version=1 if STATUSES[i % len(STATUSES)] == "synced" else 0,
                # As the push service leaves them: nothing is due for synced or failed rows.
                next_attempt_at=None
                if STATUSES[i % len(STATUSES)] in ("synced", "failed")
                else now - timedelta(minutes=i % 30),
                last_error="platform said 500" if STATUSES[i % len(STATUSES)] == "failed" else "",
                last_payload={"mp_order_number": order.mp_order_number, "order_lines": []},
                last_response='{"status": "ORDERED"}',
            )
            for i, order in enumerate(order_rows)
        ]
    )
    lines = OrderLine.objects.bulk_create(
        [
            OrderLine(
                order=order,
                mp_line_number=str(n),
                sku=f"SKU-{n}",
                product_name=f"Mug {n}",
                quantity=2,
                unit_price=Decimal("12.50"),
            )
            for order in order_rows
            for n in (1, 2)
        ]
    )
    Shipment.objects.bulk_create(
        [
            Shipment(
                line=line,
                quantity=1,
                carrier="UPS",
                tracking_number="1Z999AA10123456784",
                tracking_url="https://www.ups.com/track?tracknum=1Z999AA10123456784",
                shipped_date=now.date(),
            )
            for line in lines
            if line.mp_line_number == "1"
        ]
    )
    LineCancellation.objects.bulk_create(
        [
            LineCancellation(line=line, quantity=1, reason="out_of_stock")
            for line in lines
            if line.mp_line_number == "2"
        ]
    )
    ValidationProblem.objects.bulk_create(
        [
            ValidationProblem(
                order=order,
                code="INVALID_TRACKING_NUMBER",
                mp_line_number="1",
                message="UPS tracking number '1Z' is not valid: expected 1Z followed by 16",
                fingerprint=f"fp-{order.mp_order_number}",
                last_seen_at=now,
                reported_at=now if i % 2 else None,
                report_error="" if i % 2 else "platform unavailable",
            )
            for i, order in enumerate(order_rows)
        ]
    )
    SyncEvent.objects.bulk_create(
        [
            SyncEvent(order=order, kind=kind, version=1, message=f"{kind} for the test")
            for order in order_rows
            for kind in (SyncEvent.Kind.QUEUED, SyncEvent.Kind.PUSH_FAILED, SyncEvent.Kind.PULLED)
        ]
    )
    calls = PlatformCall.objects.bulk_create(
        [
            PlatformCall(
                seller=order.seller,
                order_number=order.mp_order_number,
                method=method,
                path=f"/orders/{order.mp_order_number}",
                status=status,
                duration_ms=42,
                response_excerpt='{"ok": true}',
            )
            for order in order_rows
            for method, status in (("PUT", 201), ("GET", 200), ("PUT", 500))
        ]
    )
    # Spread the call log over the last 24 hours (created_at is auto_now_add): one hour
    # back per bucket, no further, so the oldest stays inside the chart's 24 hour-buckets
    # even in the first minute of an hour.
    for hour in range(24):
        PlatformCall.objects.filter(pk__in=[c.pk for c in calls[hour::24]]).update(
            created_at=now - timedelta(hours=hour)
        )
    if staff_actor is not None:
        StaffAction.objects.bulk_create(
            [
                StaffAction(
                    kind=StaffAction.Kind.ORDER_RETRY,
                    actor=staff_actor,
                    actor_username=staff_actor.get_username(),
                    seller=order.seller,
                    order=order,
                    ok=True,
                    result="Pushed.",
                )
                for order in order_rows
            ]
        )
    return World(sellers=seller_rows, orders=order_rows)
