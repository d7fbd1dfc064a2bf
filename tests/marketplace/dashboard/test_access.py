"""Who may open what: staff only on the dashboard (anonymous → sign-in, others → 403), and
no secret on any dashboard or admin page."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from marketplace.dashboard.models import StaffAction
from marketplace.orders.models import OrderSync
from marketplace.orders.services.api_keys import api_key_create
from sellers.models import PlatformConnection, Seller
from tests.marketplace.dashboard.builders import World, build_world
from tests.support.app_fixtures import page_text
from tests.support.factories import PlatformConnectionFactory

pytestmark = pytest.mark.django_db

PAGES = [
    lambda w: "/dashboard/",
    lambda w: "/dashboard/live/",
    lambda w: "/dashboard/sellers/",
    lambda w: f"/dashboard/sellers/{w.sellers[0].id}/",
    lambda w: f"/dashboard/sellers/{w.sellers[0].id}/live/",
    lambda w: "/dashboard/orders/",
    lambda w: f"/dashboard/orders/{w.orders[0].id}/",
    lambda w: f"/dashboard/orders/{w.orders[0].id}/live/",
]
ACTIONS = [
    lambda w: f"/dashboard/orders/{w.orders[0].id}/retry/",
    lambda w: f"/dashboard/sellers/{w.sellers[0].id}/retry-failed/",
    lambda w: f"/dashboard/sellers/{w.sellers[0].id}/refresh/",
    lambda w: f"/dashboard/sellers/{w.sellers[0].id}/pull/",
    lambda w: f"/dashboard/sellers/{w.sellers[0].id}/disconnect/",
]


@pytest.fixture
def world(db: Any) -> World:
    return build_world(sellers=2, orders=4)


def untouched(world: World) -> tuple[list, list, int]:
    """What a refused action must leave as it was: connections, pushes, the staff log."""
    return (
        list(PlatformConnection.objects.order_by("id").values_list("state", "generation")),
        list(OrderSync.objects.order_by("id").values_list("status", "desired_version")),
        StaffAction.objects.count(),
    )


@pytest.mark.parametrize("url", PAGES)
def test_anonymous_is_sent_to_sign_in(url: Any, world: World, client: Client) -> None:
    response = client.get(url(world))
    assert response.status_code == 302
    assert response["Location"].startswith("/sellers/login/?next=")


@pytest.mark.parametrize("url", ACTIONS)
def test_anonymous_action_is_sent_to_sign_in(url: Any, world: World, client: Client) -> None:
    before = untouched(world)
    response = client.post(url(world), {"confirmed": "yes"})
    assert response.status_code == 302
    assert response["Location"].startswith("/sellers/login/?next=")
    assert untouched(world) == before


@pytest.mark.parametrize("url", ACTIONS)
def test_actions_refuse_get(url: Any, world: World, staff_client: Client) -> None:
    before = untouched(world)
    assert staff_client.get(url(world)).status_code == 405
    assert untouched(world) == before


@pytest.mark.parametrize("url", PAGES)
def test_seller_gets_403_on_every_dashboard_page(
    url: Any, world: World, seller_client: Client
) -> None:
    body = page_text(seller_client.get(url(world)), status=403)
    assert "This page is for marketplace staff" in body
    assert "signed in as <strong>alice</strong>" in body


@pytest.mark.parametrize("url", ACTIONS)
def test_seller_cannot_post_an_action(url: Any, world: World, seller_client: Client) -> None:
    before = untouched(world)
    body = page_text(seller_client.post(url(world), {"confirmed": "yes"}), status=403)
    assert "This page is for marketplace staff" in body
    assert untouched(world) == before


@pytest.mark.parametrize("url", PAGES)
def test_signed_in_user_without_staff_flag_gets_403(
    url: Any, world: World, plain_user: Any, client: Client
) -> None:
    client.force_login(plain_user)
    body = page_text(client.get(url(world)), status=403)
    assert "This page is for marketplace staff" in body
    assert "signed in as <strong>carol</strong>" in body


@pytest.mark.parametrize("url", PAGES)
def test_staff_opens_every_page(url: Any, world: World, staff_client: Client) -> None:
    response = staff_client.get(url(world))
    assert response.status_code == 200
    if b"<html" in response.content:
        assert b"<title>" in response.content
        assert b'href="/dashboard/sellers/"' in response.content  # the staff navigation


def test_dashboard_and_admin_never_show_tokens(staff_client: Client, seller: Seller) -> None:
    connection = PlatformConnectionFactory(
        seller=seller, access_token="at-very-secret-1", refresh_token="rt-very-secret-2"
    )
    assert connection.access_token == "at-very-secret-1"  # really stored, through the vault
    # Each page really shows this connection (a 404 or an empty list shows no token either).
    pages = {
        f"/dashboard/sellers/{seller.id}/": "Connected",
        f"/dashboard/sellers/{seller.id}/live/": "Connected",
        "/dashboard/sellers/": f'href="/dashboard/sellers/{seller.id}/"',
        f"/admin/sellers/platformconnection/{connection.id}/change/": (
            connection.access_token_fingerprint
        ),
    }
    secrets = (
        "at-very-secret-1",
        "rt-very-secret-2",
        connection.access_token_ciphertext,
        connection.refresh_token_ciphertext,
    )
    for url, shown in pages.items():
        body = page_text(staff_client.get(url))
        assert shown in body, url
        for secret in secrets:
            assert secret not in body, url


def test_api_key_admin_does_not_show_the_key_hash(staff_client: Client) -> None:
    key, raw = api_key_create(name="back-office")
    body = page_text(staff_client.get(f"/admin/orders/apikey/{key.id}/change/"))
    assert "back-office" in body
    assert raw not in body
    assert key.key_hash not in body


def test_admin_stays_available_to_staff(staff_client: Client, world: World) -> None:
    assert staff_client.get("/admin/").status_code == 200
    assert staff_client.get(f"/admin/orders/order/{world.orders[0].id}/change/").status_code == 200
    assert staff_client.get("/admin/dashboard/staffaction/").status_code == 200
