"""The list pages' bulk buttons without a browser: what is selected, what each does, what
it says, and that only Disconnect asks first (with the count)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from marketplace.dashboard.bulk import BULK_LIMIT, selected_ids
from marketplace.dashboard.models import StaffAction
from marketplace.orders.models import SyncEvent
from sellers import vault
from sellers.models import PlatformConnection
from tests.marketplace.dashboard.builders import World, build_world
from tests.support.app_fixtures import page_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(staff_user: Any) -> World:
    return build_world(sellers=5, orders=10)


def test_a_selection_keeps_numbers_only_once_and_is_capped() -> None:
    assert selected_ids(["3", "x", "-1", "3", "0", "7"]) == [3, 7]
    assert len(selected_ids([str(n) for n in range(1, BULK_LIMIT + 50)])) == BULK_LIMIT


def test_nothing_selected_says_so(world: World, staff_client: Client) -> None:
    response = staff_client.post("/dashboard/orders/bulk/retry/", follow=True)
    assert "No order was selected." in page_text(response)
    response = staff_client.post("/dashboard/sellers/bulk/pull/", follow=True)
    assert "No seller was selected." in page_text(response)
    assert not StaffAction.objects.exists()


def test_pull_many_queues_the_live_ones_and_names_the_others(
    world: World, staff_client: Client
) -> None:
    # Sellers 0..4: connected (with tokens here), needs re-authorization, disconnected,
    # not connected, no connection at all
    PlatformConnection.objects.filter(seller=world.sellers[0]).update(
        access_token_ciphertext=vault.token_encrypt("not-a-real-token"),
        refresh_token_ciphertext=vault.token_encrypt("not-a-real-refresh"),
    )
    ids = [str(s.pk) for s in world.sellers]
    response = staff_client.post(
        "/dashboard/sellers/bulk/pull/",
        {"ids": ids, "next": "/dashboard/sellers/?sort=-failures"},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/dashboard/sellers/?sort=-failures"
    body = page_text(response)
    assert "Pull queued for 1 seller." in body
    assert "Not pulled (their platform connection is not live): Shop W 001" in body
    assert StaffAction.objects.filter(kind="seller_pull").count() == 5


def test_disconnect_many_asks_with_the_count_then_acts(world: World, staff_client: Client) -> None:
    ids = [str(world.sellers[0].pk), str(world.sellers[1].pk)]
    asked = page_text(staff_client.post("/dashboard/sellers/bulk/disconnect/", {"ids": ids}))
    assert "Disconnect 2 sellers from the platform? This cannot be undone" in asked
    for seller_id in ids:  # the selection goes round the confirmation page
        assert f'name="ids" value="{seller_id}"' in asked
    assert not PlatformConnection.objects.filter(state="disconnected", seller_id__in=ids).exists()
    done = staff_client.post(
        "/dashboard/sellers/bulk/disconnect/", {"ids": ids, "confirmed": "yes"}, follow=True
    )
    assert "Disconnected 2 sellers; their stored tokens were wiped." in page_text(done)
    assert PlatformConnection.objects.filter(state="disconnected", seller_id__in=ids).count() == 2


def test_bulk_actions_are_for_staff_only(world: World, client: Client) -> None:
    seller_user = world.sellers[0].user
    client.force_login(seller_user)
    for url in ("/dashboard/orders/bulk/retry/", "/dashboard/sellers/bulk/disconnect/"):
        response = client.post(url, {"ids": [str(world.sellers[1].pk)], "confirmed": "yes"})
        assert response.status_code == 403
    assert (
        not PlatformConnection.objects.filter(state="disconnected")
        .exclude(seller=world.sellers[2])
        .exists()
    )


def test_the_navigation_counts_what_needs_staff(world: World, staff_client: Client) -> None:
    body = page_text(staff_client.get("/dashboard/orders/"))
    # build_world: every fifth order failed (2 of 10); one seller needs re-authorization
    assert 'id="nav-failed"' in body
    assert '2 orders failed to reach the platform">2<' in body
    assert '1 seller must connect again">1<' in body


def test_retry_many_leaves_orders_already_up_to_date_alone(
    world: World, staff_client: Client
) -> None:
    synced = [o for o in world.orders if o.sync.status == "synced"]
    assert synced
    ids = [str(o.pk) for o in synced]
    response = staff_client.post("/dashboard/orders/bulk/retry/", {"ids": ids}, follow=True)
    assert f"Retried {len(ids)} order" in page_text(response)
    assert f"{len(ids)} already up to date." in page_text(response)
    assert not SyncEvent.objects.filter(order__in=synced, kind="admin_retry").exists()
    assert set(StaffAction.objects.filter(kind="order_retry").values_list("result", flat=True)) == {
        "Already up to date; nothing sent."
    }
