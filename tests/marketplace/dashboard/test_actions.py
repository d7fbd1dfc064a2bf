"""The dashboard's actions against the real sandbox: each is a confirmed, CSRF-protected
POST, runs the owning app's service, records who did it and shows its result."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from marketplace.dashboard.models import StaffAction
from marketplace.orders.intake_schema import OrderIn
from marketplace.orders.models import Order, OrderSync, Shipment, SyncEvent
from marketplace.orders.services.intake import order_create
from marketplace.sync.models import SellerSync
from sellers.models import ConnectionEvent, PlatformConnection, Seller
from tests.marketplace.conftest import order_body, wait_for
from tests.support.app_fixtures import PLATFORM_SELLER, Platform, page_text
from tests.support.factories import PlatformConnectionFactory

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


def test_only_what_cannot_be_undone_asks_for_confirmation_first(
    failing_order: Order, staff_client: Client
) -> None:
    # Disconnect deletes the stored tokens: the first POST (no JavaScript) only asks
    seller = failing_order.seller
    response = staff_client.post(f"/dashboard/sellers/{seller.id}/disconnect/")
    body = page_text(response)
    assert 'id="confirm-button"' in body
    assert 'name="confirmed" value="yes"' in body
    assert "This cannot be undone" in body
    assert PlatformConnection.objects.get(seller=seller).state == "connected"
    assert not StaffAction.objects.exists()
    # A retry re-sends the order as it is: it acts at once
    response = staff_client.post(f"/dashboard/orders/{failing_order.id}/retry/")
    assert response.status_code == 302
    assert sync_status(failing_order) == "synced"
    assert StaffAction.objects.get().kind == "order_retry"


def test_an_action_without_csrf_token_is_refused(failing_order: Order, staff_user: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)
    response = client.post(f"/dashboard/orders/{failing_order.id}/retry/", {"confirmed": "yes"})
    assert "CSRF verification failed" in page_text(response, status=403)
    assert sync_status(failing_order) == "failed"
    assert not StaffAction.objects.exists()


def test_retry_pushes_a_failed_order_and_records_who(
    failing_order: Order, platform: Platform, staff_client: Client, staff_user: Any
) -> None:
    response = staff_client.post(
        f"/dashboard/orders/{failing_order.id}/retry/", {"confirmed": "yes"}, follow=True
    )
    assert sync_status(failing_order) == "synced"
    assert platform.sandbox.order("MP-D1")["marketplace_state"] == "AWAITING_SHIPMENT"
    assert "Pushed: the platform has the current version" in page_text(response)
    retry = SyncEvent.objects.get(order=failing_order, kind=SyncEvent.Kind.ADMIN_RETRY)
    assert retry.actor == "staff"
    action = StaffAction.objects.get()
    assert (action.kind, action.actor, action.ok) == ("order_retry", staff_user, True)
    assert "Retry push" in page_text(response)  # the staff-action log on the page


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
    assert "Retried 2 failed pushes." in page_text(response)
    assert {sync_status(failing_order), sync_status(second)} == {"synced"}


def test_refresh_now_refreshes_the_token(
    platform: Platform, seller: Seller, staff_client: Client
) -> None:
    before = platform.connect(seller).generation
    response = staff_client.post(
        f"/dashboard/sellers/{seller.id}/refresh/", {"confirmed": "yes"}, follow=True
    )
    assert "Connection renewed" in page_text(response)
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
    assert "the seller must reconnect" in page_text(response)
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
    assert "Pulled." in page_text(response)
    assert Shipment.objects.filter(line__order=order).exists()
    assert SellerSync.objects.get(seller=seller).last_success_at is not None


PULL_QUEUED = "Pull queued; the pull status updates when it finishes."


def test_pull_now_queues_a_pull_that_a_real_worker_runs(
    platform: Platform,
    seller: Seller,
    staff_client: Client,
    staff_user: Any,
    celery_worker_thread: Any,
) -> None:
    # Given a connected seller whose order the platform has shipped, not yet pulled
    platform.connect(seller)
    order = place("MP-Q1", seller)
    wait_for(lambda: sync_status(order) == "synced", what="the order pushed by the worker")
    platform.sandbox.ship("MP-Q1")
    # The listing answers late, so the worker's pull is still running when the page answers.
    platform.sandbox.set_faults(endpoint="list_orders", kind="latency", latency_ms=1500, count=1)
    seller_page = page_text(staff_client.get(f"/dashboard/sellers/{seller.id}/"))
    assert 'id="pull-button"' in seller_page
    assert f'action="/dashboard/sellers/{seller.id}/pull/"' in seller_page

    # When staff press "Pull now" (harmless: it acts at once, no confirmation)
    assert 'data-confirm="Read this seller' not in seller_page
    response = staff_client.post(f"/dashboard/sellers/{seller.id}/pull/", follow=True)

    # Then they are back on the seller's page, which says the pull is queued
    assert response.redirect_chain == [(f"/dashboard/sellers/{seller.id}/", 302)]
    assert PULL_QUEUED in page_text(response)
    action = StaffAction.objects.get()
    assert (action.kind, action.actor, action.seller, action.ok) == (
        "seller_pull",
        staff_user,
        seller,
        True,
    )
    assert action.result == PULL_QUEUED
    assert not Shipment.objects.filter(line__order=order).exists()  # not run in the request
    # and the worker really runs the queued pull: the shipment arrives
    wait_for(
        lambda: Shipment.objects.filter(line__order=order).exists(), what="the pulled shipment"
    )
    state = wait_for(
        lambda: SellerSync.objects.filter(seller=seller, last_success_at__isnull=False).first(),
        what="the pull's success recorded",
    )
    assert state.last_error == ""
    assert state.last_success_at > action.created_at
    assert [r["endpoint"] for r in platform.requests(endpoint="list_orders")] == ["list_orders"]
    # and the returns/refunds pull ran in the same pull (the seller has a shipped order),
    # before its outcome was recorded with the orders pull's
    assert state.after_sale_finished_at is not None
    assert state.claim_token == ""


@pytest.mark.parametrize(
    "connection",
    [None, "not_connected", "needs_reauth", "disconnected", "connected_without_tokens"],
)
def test_pull_now_without_a_live_connection_is_refused_and_queues_nothing(
    connection: str | None,
    seller: Seller,
    staff_client: Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from marketplace.sync import pull_now

    queued: list[int] = []
    monkeypatch.setattr(pull_now, "task_enqueue", lambda name, sid: queued.append(sid))
    if connection == "connected_without_tokens":
        PlatformConnectionFactory(seller=seller, access_token="", refresh_token="")
    elif connection is not None:
        PlatformConnectionFactory(seller=seller, **{connection: True})
    # The page offers the Pull button only for a connected seller (this one's state says
    # "connected" but it holds no tokens); a stale page or a crafted POST still reaches
    # the action, which must refuse.
    seller_page = page_text(staff_client.get(f"/dashboard/sellers/{seller.id}/"))
    assert ('id="pull-button"' in seller_page) == (connection == "connected_without_tokens")
    assert 'id="seller-actions"' in seller_page

    response = staff_client.post(
        f"/dashboard/sellers/{seller.id}/pull/", {"confirmed": "yes"}, follow=True
    )

    assert response.redirect_chain == [(f"/dashboard/sellers/{seller.id}/", 302)]
    body = page_text(response)
    assert "Not pulled: the seller&#x27;s platform connection is not live." in body
    assert PULL_QUEUED not in body
    assert queued == []
    assert not SellerSync.objects.filter(seller=seller).exists()
    action = StaffAction.objects.get()
    assert (action.kind, action.ok) == ("seller_pull", False)


def test_pull_now_of_an_unknown_seller_is_404(staff_client: Client) -> None:
    response = staff_client.post("/dashboard/sellers/999999/pull/", {"confirmed": "yes"})
    assert "Not Found" in page_text(response, status=404)
    assert not StaffAction.objects.exists()


def test_disconnect_records_the_staff_member(
    platform: Platform, seller: Seller, staff_client: Client, staff_user: Any
) -> None:
    platform.connect(seller)
    response = staff_client.post(
        f"/dashboard/sellers/{seller.id}/disconnect/", {"confirmed": "yes"}, follow=True
    )
    assert "Disconnected; the stored tokens were wiped." in page_text(response)
    connection = PlatformConnection.objects.get(seller=seller)
    assert connection.state == "disconnected"
    assert not connection.has_tokens
    event = ConnectionEvent.objects.filter(seller=seller, kind="disconnected").get()
    assert event.actor == staff_user
    assert "staff (staff)" in page_text(response)  # on the timeline
