"""connection_refresh / connection_access_token / connection_disconnect against the sandbox."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from sellers import services, tasks, vault
from sellers.errors import (
    ConnectionNotLive,
    ReauthorizationRequired,
    TokenRefreshUnavailable,
)
from sellers.models import ConnectionEvent, PlatformConnection, Seller
from tests.support.app_fixtures import PLATFORM_SELLER, Platform, token_calls_wait_out
from tests.support.factories import PlatformConnectionFactory

pytestmark = pytest.mark.django_db


def expire_soon(connection: PlatformConnection, minutes: float = 1) -> None:
    PlatformConnection.objects.filter(id=connection.id).update(
        access_token_expires_at=timezone.now() + timedelta(minutes=minutes)
    )


def orders_status(platform: Platform, token: str) -> int:
    return requests.get(
        platform.sandbox.api_url + "/orders",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    ).status_code


def test_refresh_stores_rotated_tokens_and_the_new_token_works(
    seller: Seller, platform: Platform
) -> None:
    connection = platform.connect(seller)
    old_access, old_refresh = connection.access_token, connection.refresh_token
    expire_soon(connection)

    refreshed = services.connection_refresh(connection_id=connection.id)

    assert refreshed.access_token != old_access
    assert refreshed.refresh_token != old_refresh
    assert refreshed.generation == connection.generation + 1
    assert refreshed.access_token_expires_at > timezone.now() + timedelta(minutes=59)
    assert refreshed.last_refreshed_at is not None
    assert orders_status(platform, refreshed.access_token) == 200
    assert platform.counters()["refresh_token_reuse"] == 0
    assert ConnectionEvent.objects.filter(seller=seller, kind="refreshed").count() == 1


def test_a_refresh_refuses_to_run_inside_a_callers_transaction(
    seller: Seller, platform: Platform
) -> None:
    # Nested, a rollback of the caller's work would undo the rotated refresh token after
    # the platform spent the old one: the next refresh would cost the grant.
    from django.db import transaction

    connection = platform.connect(seller)
    expire_soon(connection)
    with pytest.raises(RuntimeError, match="durable"), transaction.atomic():
        services.connection_refresh(connection_id=connection.id)
    # Nothing was sent: the stored grant still refreshes
    assert services.connection_refresh(connection_id=connection.id).generation == (
        connection.generation + 1
    )
    assert platform.counters()["refresh_token_reuse"] == 0


def test_refresh_without_rotation_keeps_the_old_refresh_token(
    seller: Seller, platform: Platform
) -> None:
    platform.sandbox.set_rotation(False)
    connection = platform.connect(seller)
    old_refresh, old_expiry = connection.refresh_token, connection.refresh_token_expires_at
    expire_soon(connection)

    refreshed = services.connection_refresh(connection_id=connection.id)

    assert refreshed.refresh_token == old_refresh
    assert refreshed.refresh_token_expires_at == old_expiry
    # ...and it still works for the next refresh.
    expire_soon(refreshed)
    again = services.connection_refresh(connection_id=connection.id)
    assert again.refresh_token == old_refresh
    assert orders_status(platform, again.access_token) == 200


def test_refresh_of_a_fresh_token_does_nothing_unless_forced(
    seller: Seller, platform: Platform
) -> None:
    connection = platform.connect(seller)

    same = services.connection_refresh(connection_id=connection.id)
    assert same.access_token == connection.access_token
    assert platform.refresh_requests() == 0

    # A forced refresh naming the token that got a 401 refreshes once...
    stale = vault.token_fingerprint(connection.access_token)
    forced = services.connection_refresh(
        connection_id=connection.id, force=True, stale_token_fingerprint=stale
    )
    assert forced.access_token != connection.access_token
    # ...and a second caller holding the same stale token does not refresh again.
    again = services.connection_refresh(
        connection_id=connection.id, force=True, stale_token_fingerprint=stale
    )
    assert again.access_token == forced.access_token
    assert (
        services.connection_refresh(
            connection_id=connection.id, force=True, seen_generation=connection.generation
        ).access_token
        == forced.access_token
    )
    # Without a hint, a refresh within the last seconds counts as "someone just did it".
    assert services.connection_refresh(connection_id=connection.id, force=True).generation == (
        forced.generation
    )
    assert platform.refresh_requests() == 1


def test_revoked_grant_moves_to_needs_reauth_and_emails_the_seller(
    seller: Seller, platform: Platform, django_capture_on_commit_callbacks
) -> None:
    connection = platform.connect(seller)
    platform.sandbox.revoke(PLATFORM_SELLER)
    expire_soon(connection)

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ReauthorizationRequired):
        services.connection_refresh(connection_id=connection.id)

    connection.refresh_from_db()
    assert connection.state == PlatformConnection.State.NEEDS_REAUTH
    assert not connection.has_tokens
    assert "invalid_grant" in connection.last_error
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["alice@example.com"]
    assert "reconnect" in mail.outbox[0].body.lower()
    assert ConnectionEvent.objects.filter(seller=seller, kind="needs_reauth").exists()
    with pytest.raises(ReauthorizationRequired):
        services.connection_access_token(connection_id=connection.id)

    client = Client()
    client.force_login(seller.user)
    portal = client.get(reverse("sellers:portal")).content.decode()
    assert "Needs re-authorization" in portal
    assert "no longer accepts" in portal


def test_reconnect_after_revocation_restores_the_connection(
    seller: Seller, platform: Platform
) -> None:
    connection = platform.connect(seller)
    platform.sandbox.revoke(PLATFORM_SELLER)
    expire_soon(connection)
    with pytest.raises(ReauthorizationRequired):
        services.connection_refresh(connection_id=connection.id)

    client = Client()
    client.force_login(seller.user)
    response = client.post(reverse("sellers:connect"))
    state = parse_qs(urlsplit(response["Location"]).query)["state"][0]
    callback = client.get(
        reverse("sellers:callback"), {"code": platform.mint_code(), "state": state}
    )
    assert callback.status_code == 302, ConnectionEvent.objects.filter(seller=seller).first().detail

    connection.refresh_from_db()
    assert connection.state == PlatformConnection.State.CONNECTED
    token = services.connection_access_token(connection_id=connection.id)
    assert orders_status(platform, token) == 200


@pytest.mark.parametrize("fault", ["500", "429", "malformed_json"])
def test_transient_refresh_failure_changes_nothing_and_keeps_a_valid_token_in_use(
    seller: Seller, platform: Platform, fault: str
) -> None:
    connection = platform.connect(seller)
    expire_soon(connection)
    platform.sandbox.set_faults(endpoint="access_token", kind=fault, count=2)

    with pytest.raises(TokenRefreshUnavailable):
        services.connection_refresh(connection_id=connection.id)
    # The current token is still valid for a minute: use it rather than fail.
    assert services.connection_access_token(connection_id=connection.id) == (
        connection.access_token
    )

    after = PlatformConnection.objects.get(id=connection.id)
    assert after.state == PlatformConnection.State.CONNECTED
    assert after.access_token == connection.access_token
    assert after.refresh_token == connection.refresh_token
    assert after.last_error
    assert ConnectionEvent.objects.filter(seller=seller, kind="refresh_failed").count() == 2
    # Once the platform is back (and the wait a 429 asked for is over: the second
    # refresh above was held, not sent), the refresh goes through and clears the error.
    platform.sandbox.clear_faults()
    token_calls_wait_out()
    assert services.connection_refresh(connection_id=connection.id).last_error == ""


@pytest.mark.parametrize("reading", ["A", "B"])
def test_a_refresh_whose_answer_is_lost_is_asked_again_at_once(
    seller: Seller,
    platform: Platform,
    settings: Any,
    reading: str,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Given a refresh the platform carries out (it rotates the refresh token) whose answer
    # never reaches us: it hangs past our read timeout after the platform's work
    settings.PLATFORM_TOKEN_READ_TIMEOUT = 1.0
    platform.sandbox.readings(refresh_reuse=reading)
    connection = platform.connect(seller)
    expire_soon(connection)
    platform.sandbox.set_faults(
        endpoint="access_token", kind="hang", after_view=True, hang_seconds=2.5, count=1
    )

    if reading == "B":
        # Under a reuse interval the spent token, asked again at once, is exchanged again
        refreshed = services.connection_refresh(connection_id=connection.id)

        assert refreshed.access_token != connection.access_token
        assert refreshed.refresh_token != connection.refresh_token
        assert orders_status(platform, refreshed.access_token) == 200
        assert platform.refresh_requests() == 2
        counters = platform.counters()
        assert (counters["refresh_regrant"], counters["refresh_token_reuse"]) == (1, 0)
        # ...and the refresh token it stored is the live one
        expire_soon(refreshed)
        again = services.connection_refresh(connection_id=connection.id)
        assert orders_status(platform, again.access_token) == 200
        assert platform.sandbox.violations()["total"] == 0
    else:
        # Without one, the grant is lost (as at any later try): the seller is told once,
        # and the sandbox names the cause, an answer never stored
        with (
            django_capture_on_commit_callbacks(execute=True),
            pytest.raises(ReauthorizationRequired),
        ):
            services.connection_refresh(connection_id=connection.id)

        after = PlatformConnection.objects.get(id=connection.id)
        assert after.state == PlatformConnection.State.NEEDS_REAUTH
        assert len(mail.outbox) == 1
        assert platform.refresh_requests() == 2
        violations = platform.sandbox.violations()
        assert violations["total"] == violations["by_kind"]["refresh_token_reuse"] == 1
        assert "its successor was never presented" in violations["recent"][0]["detail"]


def test_access_token_with_expired_token_and_platform_down_raises_unavailable(
    seller: Seller, platform: Platform
) -> None:
    connection = platform.connect(seller)
    expire_soon(connection, minutes=-1)
    platform.sandbox.set_faults(endpoint="access_token", kind="503", count=1)
    with pytest.raises(TokenRefreshUnavailable):
        services.connection_access_token(connection_id=connection.id)
    token_calls_wait_out()  # the 503 said when to come back
    assert services.connection_access_token(connection_id=connection.id)


def test_access_token_refreshes_inside_the_leeway_only(seller: Seller, platform: Platform) -> None:
    connection = platform.connect(seller)
    expire_soon(connection, minutes=5)  # inside the sweep window, outside the leeway
    assert services.connection_access_token(connection_id=connection.id) == (
        connection.access_token
    )
    expire_soon(connection, minutes=1)
    token = services.connection_access_token(connection_id=connection.id)
    assert token != connection.access_token
    assert platform.refresh_requests() == 1


def test_access_token_of_an_unconnected_connection_raises_not_live(seller: Seller) -> None:
    connection = PlatformConnectionFactory(seller=seller, not_connected=True)
    with pytest.raises(ConnectionNotLive):
        services.connection_access_token(connection_id=connection.id)
    with pytest.raises(ConnectionNotLive):
        services.connection_access_token(connection_id=connection.id + 999)


def test_disconnect_wipes_tokens_and_records_the_actor(
    seller: Seller,
    staff_user,
    platform: Platform,
) -> None:
    connection = platform.connect(seller)

    services.connection_disconnect(connection_id=connection.id, actor=staff_user)

    connection.refresh_from_db()
    assert connection.state == PlatformConnection.State.DISCONNECTED
    assert connection.access_token_ciphertext == connection.refresh_token_ciphertext == ""
    event = ConnectionEvent.objects.filter(seller=seller).first()
    assert event.kind == "disconnected"
    assert event.actor == staff_user
    assert "staff (staff)" in event.detail
    with pytest.raises(ConnectionNotLive):
        services.connection_access_token(connection_id=connection.id)


def test_refresh_task_retries_transient_failures(
    seller: Seller, platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    connection = platform.connect(seller)
    expire_soon(connection)
    platform.sandbox.set_faults(endpoint="access_token", kind="503", count=1)
    retries = []

    def fake_retry(*, exc: Exception, countdown: float) -> Exception:
        retries.append(countdown)
        return RuntimeError("retry scheduled")

    monkeypatch.setattr(tasks.connection_refresh_task, "retry", fake_retry)
    with pytest.raises(RuntimeError, match="retry scheduled"):
        tasks.connection_refresh_task.run(connection.id)
    assert 15 <= retries[0] <= 300

    token_calls_wait_out()  # the 503 said when to come back
    tasks.connection_refresh_task.run(connection.id)  # platform back: refreshed
    connection.refresh_from_db()
    assert connection.last_refreshed_at is not None
    services.connection_disconnect(connection_id=connection.id, actor=None)
    tasks.connection_refresh_task.run(connection.id)  # not live: nothing to do, no error
