"""Who may see what: sellers see only their own connection; staff and users without a
seller profile get a clear page; the admin is staff-only and shows no token."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from marketplace.templatetags.display import format_time
from sellers.models import ConnectionEvent, PlatformConnection, Seller
from tests.support.app_fixtures import PLATFORM_SELLER_B, Platform, page_text, signed_in

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["sellers:portal", "sellers:connection"])
def test_anonymous_visitors_are_sent_to_sign_in(name: str) -> None:
    response = Client().get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith("/sellers/login/")


@pytest.mark.parametrize("name", ["sellers:portal", "sellers:connection"])
def test_staff_get_a_clear_403_on_seller_pages(staff_user, name: str) -> None:
    response = signed_in(staff_user).get(reverse(name))
    assert response.status_code == 403
    assert "signed in as staff" in response.content.decode()


def test_users_without_seller_profile_get_a_clear_page(plain_user) -> None:
    response = signed_in(plain_user).get(reverse("sellers:connection"))
    assert response.status_code == 403
    assert "no seller profile" in response.content.decode()


def test_sign_in_page_signs_a_seller_in_and_out(seller: Seller) -> None:
    client = Client()
    page = client.get(reverse("sellers:login"))
    assert page.status_code == 200
    response = client.post(
        reverse("sellers:login"), {"username": "alice", "password": "alice-pass-123"}
    )
    assert response.status_code == 302
    assert client.get(reverse("sellers:portal")).status_code == 200
    assert client.get(reverse("sellers:logout")).status_code == 405
    assert client.post(reverse("sellers:logout")).status_code == 302
    assert client.get(reverse("sellers:portal")).status_code == 302


def test_portal_has_an_orders_section_with_empty_state(seller_client: Client) -> None:
    body = page_text(seller_client.get(reverse("sellers:portal")))
    assert 'id="orders"' in body
    assert "No orders yet." in body
    assert "Not connected" in body


def test_connection_page_shows_state_expiries_and_buttons(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    assert 'id="connect-button"' in page_text(seller_client.get(reverse("sellers:connection")))
    connection = platform.connect(seller)
    body = page_text(seller_client.get(reverse("sellers:connection")))
    assert "Connected" in body
    assert format_time(connection.refresh_token_expires_at) in body
    assert 'id="reconnect-button"' in body
    assert 'id="disconnect-button"' in body
    assert "until the permission ends by itself" in body
    assert connection.access_token not in body
    assert connection.refresh_token not in body


def test_seller_cannot_disconnect_another_sellers_connection(
    seller_client: Client, seller: Seller, other_seller: Seller, platform: Platform
) -> None:
    bobs = platform.connect(other_seller, who=PLATFORM_SELLER_B)
    platform.connect(seller)

    response = seller_client.post(reverse("sellers:disconnect"), {"connection_id": bobs.id})

    assert "Not Found" in page_text(response, status=404)
    assert PlatformConnection.objects.get(id=bobs.id).state == "connected"
    assert PlatformConnection.objects.get(seller=seller).state == "connected"


def test_seller_disconnects_own_connection(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    connection = platform.connect(seller)
    # The first POST (no JavaScript confirm) only asks
    response = seller_client.post(reverse("sellers:disconnect"), {"connection_id": connection.id})
    assert "Disconnect from the platform?" in page_text(response)
    assert PlatformConnection.objects.get(id=connection.id).state == "connected"
    response = seller_client.post(
        reverse("sellers:disconnect"),
        {"connection_id": connection.id, "confirmed": "yes"},
        follow=True,
    )
    assert response.status_code == 200
    assert "Disconnected" in response.content.decode()
    connection.refresh_from_db()
    assert connection.state == "disconnected"
    event = ConnectionEvent.objects.filter(seller=seller).first()
    assert (event.kind, event.actor) == ("disconnected", seller.user)


def test_disconnect_needs_post_and_csrf(seller: Seller, platform: Platform) -> None:
    connection = platform.connect(seller)
    client = Client(enforce_csrf_checks=True)
    client.force_login(seller.user)
    assert client.get(reverse("sellers:disconnect")).status_code == 405
    response = client.post(reverse("sellers:disconnect"), {"connection_id": connection.id})
    assert "CSRF verification failed" in page_text(response, status=403)
    assert PlatformConnection.objects.get(id=connection.id).state == "connected"


def test_admin_is_staff_only(seller_client: Client) -> None:
    response = seller_client.get(reverse("admin:sellers_platformconnection_changelist"))
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_admin_shows_expiry_and_fingerprint_but_no_token(
    staff_user, seller: Seller, platform: Platform
) -> None:
    connection = platform.connect(seller)
    client = signed_in(staff_user)
    # Each page really lists this seller's rows (a 404 or an empty list shows no token either).
    for url, shown in (
        (reverse("admin:sellers_platformconnection_changelist"), f"{seller.id}: Connected"),
        (
            reverse("admin:sellers_platformconnection_change", args=[connection.id]),
            connection.refresh_token_fingerprint,
        ),
        (reverse("admin:sellers_connectionevent_changelist"), "Connected for the first time"),
        (reverse("admin:sellers_seller_changelist"), escape(seller.display_name)),
    ):
        body = page_text(client.get(url))
        assert shown in body, url
        assert connection.access_token not in body
        assert connection.refresh_token not in body
        assert connection.access_token_ciphertext not in body
        assert connection.refresh_token_ciphertext not in body
    detail = page_text(
        client.get(reverse("admin:sellers_platformconnection_change", args=[connection.id]))
    )
    assert connection.access_token_fingerprint in detail
    assert "Access token expires at" in detail


def test_admin_action_disconnects_with_staff_as_actor(
    staff_user, seller: Seller, platform: Platform
) -> None:
    connection = platform.connect(seller)
    response = signed_in(staff_user).post(
        reverse("admin:sellers_platformconnection_changelist"),
        {"action": "disconnect_selected", "_selected_action": [connection.id]},
    )
    assert response.status_code == 302
    connection.refresh_from_db()
    assert connection.state == "disconnected"
    assert ConnectionEvent.objects.filter(seller=seller).first().actor == staff_user
