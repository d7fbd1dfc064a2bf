"""The test factories build what production builds: tokens only as the vault's ciphertext,
each connection state as the services leave it, personas that can really sign in."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from marketplace.orders.models import OrderSync
from sellers import vault
from sellers.models import PlatformConnection
from tests.support.factories import (
    OrderFactory,
    PlatformConnectionFactory,
    SellerFactory,
    StaffUserFactory,
    password_of,
)

pytestmark = pytest.mark.django_db


def test_a_connected_grant_is_live_and_stored_only_as_ciphertext() -> None:
    connection = PlatformConnectionFactory(access_token="at-plain-1", refresh_token="rt-plain-2")
    stored = PlatformConnection.objects.get(pk=connection.pk)
    assert stored.is_live
    assert (stored.access_token, stored.refresh_token) == ("at-plain-1", "rt-plain-2")
    assert "at-plain-1" not in stored.access_token_ciphertext
    assert vault.token_decrypt(stored.refresh_token_ciphertext) == "rt-plain-2"
    assert stored.access_token_expires_at > stored.connected_at


@pytest.mark.parametrize(
    ("trait", "state"),
    [
        ("needs_reauth", "needs_reauth"),
        ("disconnected", "disconnected"),
        ("not_connected", "not_connected"),
    ],
)
def test_a_lost_or_absent_grant_holds_no_token(trait: str, state: str) -> None:
    connection = PlatformConnection.objects.get(pk=PlatformConnectionFactory(**{trait: True}).pk)
    assert connection.state == state
    assert not connection.has_tokens
    assert not connection.is_live


def test_an_expired_access_token_keeps_the_grant() -> None:
    connection = PlatformConnectionFactory(access_expired=True)
    assert connection.is_live
    assert connection.access_token_expires_at < timezone.now()
    assert connection.refresh_token_expires_at > timezone.now()


def test_personas_sign_in_with_their_password(client: Client) -> None:
    seller = SellerFactory(username="dora")
    assert seller.display_name == "Dora's Shop"
    assert seller.user.check_password(password_of("dora"))
    staff = StaffUserFactory()
    assert (staff.username, staff.is_staff) == ("staff", True)
    response = client.post("/sellers/login/", {"username": "dora", "password": password_of("dora")})
    assert response.status_code == 302
    assert client.get("/sellers/").status_code == 200


def test_an_order_comes_with_its_lines_and_optionally_its_sync_row() -> None:
    order = OrderFactory(lines__quantity=3)
    assert [(line.mp_line_number, line.quantity) for line in order.lines.all()] == [
        ("1", 3),
        ("2", 3),
    ]
    assert not OrderSync.objects.filter(order=order).exists()
    failed = OrderFactory(lines=1, sync=True, sync__status="failed")
    assert failed.lines.count() == 1
    assert failed.sync.status == "failed"
    assert OrderFactory.build().pk is None  # build() saves nothing, lines included
