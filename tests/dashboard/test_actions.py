"""The dashboard's actions against the real sandbox: each is a confirmed, CSRF-protected
POST, runs the owning app's service, records who did it and shows its result."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from marketplace.dashboard.models import StaffAction
from marketplace.orders.intake_schema import OrderIn
from marketplace.orders.models import Order, OrderSync, SellerPullState, Shipment, SyncEvent
from marketplace.orders.services.intake import order_create
from sellers.models import ConnectionEvent, PlatformConnection, Seller
from tests.app_fixtures import PLATFORM_SELLER, Platform
from tests.marketplace.conftest import order_body

# Real tasks run on commit (eager), so the database must really commit.
pytestmark = pytest.mark.django_db(transaction=True)


def place(number: str, seller: Seller) -> Order:
    order, _ = order_create(
        data=OrderIn.model_validate(order_body(number, seller=seller.user.username))
    )
    return order


def sync_status(order: Order) -> str:
    return OrderSync.objects.get(order=order).status


@pytest.fixture
def failing_order(platform: Platform, seller: Seller, eager_tasks: None, settings: Any) -> Order:
    """An order whose push really failed at the sandbox (500s, one attempt allowed)."""
    settings.PUSH_MAX_FAILURES = 1
    platform.connect(seller)
    platform.sandbox.set_faults(endpoint="put_order", kind="500")
    order = place("MP-D1", seller)
    assert sync_status(order) == "failed"
    platform.sandbox.clear_faults()
    return order


def test_an_action_asks_for_confirmation_first(failing_order: Order, staff_client: Client) -> None:
    response = staff_client.post(f"/dashboard/orders/{failing_order.id}/retry/")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="confirm-button"' in body
    assert 'name="confirmed" value="yes"' in body
    assert sync_status(failing_order) == "failed"
    assert not StaffAction.objects.exists()


def test_an_action_without_csrf_token_is_refused(failing_order: Order, staff_user: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)
    response = client.post(f"/dashboard/orders/{failing_order.id}/retry/", {"confirmed": "yes"})
    assert response.status_code == 403
    assert sync_status(failing_order) == "failed"


def test_retry_pushes_a_failed_order_and_records_who(
    failing_order: Order, platform: Platform, staff_client: Client, staff_user: Any
) -> None:
    response = staff_client.post(
        f"/dashboard/orders/{failing_order.id}/retry/", {"confirmed": "yes"}, follow=True
    )
    assert sync_status(failing_order) == "synced"
    assert platform.sandbox.order("MP-D1")["marketplace_state"] == "AWAITING_SHIPMENT"
    assert "Pushed: the platform has the current version" in response.content.decode()
    retry = SyncEvent.objects.get(order=failing_order, kind=SyncEvent.Kind.ADMIN_RETRY)
    assert retry.actor == "staff"
    action = StaffAction.objects.get()
    assert (action.kind, action.actor, action.ok) == ("order_retry", staff_user, True)
    assert "Retry push" in response.content.decode()  # the staff-action log on the page


def test_retry_all_failed_pushes_of_a_seller(
    failing_order: Order, platform: Platform, seller: Seller, staff_client: Client
) -> None:
    platform.sandbox.set_faults(endpoint="put_order", kind="500")
    second = place("MP-D2", seller)
    assert sync_status(second) == "failed"
    platform.sandbox.clear_faults()
    response = staff_client.post(
        f"/dashboard/sellers/{seller.id}/retry-failed/", {"confirmed": "yes"}, follow=True
    )
    assert "Retried 2 failed pushes." in response.content.decode()
    assert {sync_status(failing_order), sync_status(second)} == {"synced"}


def test_refresh_now_refreshes_the_token(
    platform: Platform, seller: Seller, staff_client: Client
) -> None:
    before = platform.connect(seller).generation
    response = staff_client.post(
        f"/dashboard/sellers/{seller.id}/refresh/", {"confirmed": "yes"}, follow=True
    )
    assert "Access token refreshed" in response.content.decode()
    assert PlatformConnection.objects.get(seller=seller).generation == before + 1
    assert ConnectionEvent.objects.filter(seller=seller, kind="refreshed").exists()
    assert StaffAction.objects.get().ok


def test_refresh_of_a_revoked_grant_marks_the_seller_for_reauthorization(
    platform: Platform, seller: Seller, staff_client: Client
) -> None:
    platform.connect(seller)
    platform.sandbox.revoke(PLATFORM_SELLER)
    response = staff_client.post(
        f"/dashboard/sellers/{seller.id}/refresh/", {"confirmed": "yes"}, follow=True
    )
    assert "the seller must reconnect" in response.content.decode()
    assert PlatformConnection.objects.get(seller=seller).state == "needs_reauth"
    assert not StaffAction.objects.get().ok


def test_pull_now_reads_the_sellers_fulfillment(
    platform: Platform, seller: Seller, staff_client: Client, eager_tasks: None
) -> None:
    platform.connect(seller)
    order = place("MP-D3", seller)
    assert sync_status(order) == "synced"
    platform.sandbox.ship("MP-D3")
    response = staff_client.post(
        f"/dashboard/sellers/{seller.id}/pull/", {"confirmed": "yes"}, follow=True
    )
    assert "Pulled." in response.content.decode()
    assert Shipment.objects.filter(line__order=order).exists()
    assert SellerPullState.objects.get(seller=seller).last_success_at is not None


def test_pull_now_of_a_seller_without_connection_says_why(
    seller: Seller, staff_client: Client
) -> None:
    response = staff_client.post(
        f"/dashboard/sellers/{seller.id}/pull/", {"confirmed": "yes"}, follow=True
    )
    assert "connection is not live" in response.content.decode()
    assert not StaffAction.objects.get().ok


def test_disconnect_records_the_staff_member(
    platform: Platform, seller: Seller, staff_client: Client, staff_user: Any
) -> None:
    platform.connect(seller)
    response = staff_client.post(
        f"/dashboard/sellers/{seller.id}/disconnect/", {"confirmed": "yes"}, follow=True
    )
    assert "Disconnected; the stored tokens were wiped." in response.content.decode()
    connection = PlatformConnection.objects.get(seller=seller)
    assert connection.state == "disconnected"
    assert not connection.has_tokens
    event = ConnectionEvent.objects.filter(seller=seller, kind="disconnected").get()
    assert event.actor == staff_user
    assert "staff (staff)" in response.content.decode()  # on the timeline
