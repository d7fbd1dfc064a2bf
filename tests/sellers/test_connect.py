"""The authorization flow through the Django test client against the real sandbox:
starting, every callback failure path, success, and reconnect."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from marketplace.sync.connect import sync_start_connected
from sellers.models import ConnectionEvent, OAuthState, PlatformConnection, Seller
from sellers.services import oauth_state_hash
from sellers.views import SESSION_STATE_KEY
from tests.support.app_fixtures import CALLBACK_PATH, CLIENT_ID, PLATFORM_SELLER_B, Platform

pytestmark = pytest.mark.django_db


def start(client: Client) -> str:
    """Press Connect; return the state the app sent to the platform."""
    response = client.post(reverse("sellers:connect"))
    assert response.status_code == 302
    return parse_qs(urlsplit(response["Location"]).query)["state"][0]


def last_event(seller: Seller) -> ConnectionEvent:
    return ConnectionEvent.objects.filter(seller=seller).first()


def test_connect_redirects_to_authorize_with_exactly_the_contract_parameters(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    response = seller_client.post(reverse("sellers:connect"))

    assert response.status_code == 302
    url = urlsplit(response["Location"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == platform.sandbox.api_url + "/authorize"
    query = parse_qs(url.query)
    assert set(query) == {"response_type", "client_id", "redirect_url", "state"}
    assert query["response_type"] == ["code"]
    assert query["client_id"] == [CLIENT_ID]
    assert query["redirect_url"] == [platform.redirect_url]
    state = query["state"][0]
    assert len(state) >= 40
    # Stored hashed, bound to the seller and to this browser session.
    row = OAuthState.objects.get(seller=seller)
    assert row.state_hash == oauth_state_hash(state) != state
    assert abs(row.expires_at - row.created_at - timedelta(minutes=10)) < timedelta(seconds=1)
    assert seller_client.session[SESSION_STATE_KEY] == row.state_hash
    assert last_event(seller).kind == "connect_started"


def test_connect_requires_post(seller_client: Client) -> None:
    assert seller_client.get(reverse("sellers:connect")).status_code == 405


def test_callback_with_valid_state_and_code_connects(
    seller_client: Client, seller: Seller, platform: Platform, django_capture_on_commit_callbacks
) -> None:
    state = start(seller_client)
    code = platform.mint_code()
    with django_capture_on_commit_callbacks(execute=True):
        response = seller_client.get(CALLBACK_PATH, {"code": code, "state": state})

    assert response.status_code == 302
    assert response["Location"] == reverse("sellers:connection")
    connection = PlatformConnection.objects.get(seller=seller)
    assert connection.state == "connected"
    assert connection.is_live
    assert connection.access_token.startswith("at")
    assert connection.refresh_token
    assert timedelta(minutes=59) < connection.access_token_expires_at - timezone.now()
    assert timedelta(days=364) < connection.refresh_token_expires_at - timezone.now()
    # The committed grant is what the sync's next tick starts the seller's pulls from
    assert sync_start_connected() == [seller.id]
    assert last_event(seller).kind == "connected"
    page = seller_client.get(reverse("sellers:connection"))
    assert "Connected" in page.content.decode()
    assert platform.counters()["token_requests"] == {"authorization_code": 1}


def _refused(response, seller: Seller, reason_fragment: str) -> None:
    assert response.status_code == 400
    assert "Nothing was stored" in response.content.decode()
    assert not PlatformConnection.objects.filter(seller=seller).exists()
    event = last_event(seller)
    assert event.kind == "connect_failed"
    assert reason_fragment in event.detail


def test_callback_without_state_is_refused(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    start(seller_client)
    response = seller_client.get(CALLBACK_PATH, {"code": platform.mint_code()})
    _refused(response, seller, "state missing")


def test_callback_with_unknown_state_is_refused(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    start(seller_client)
    response = seller_client.get(
        CALLBACK_PATH, {"code": platform.mint_code(), "state": "tampered-state-value"}
    )
    _refused(response, seller, "state unknown")


def test_callback_with_expired_state_is_refused(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    state = start(seller_client)
    OAuthState.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = seller_client.get(CALLBACK_PATH, {"code": platform.mint_code(), "state": state})
    _refused(response, seller, "state expired")


def test_callback_with_replayed_state_is_refused(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    state = start(seller_client)
    first = seller_client.get(CALLBACK_PATH, {"code": platform.mint_code(), "state": state})
    assert first.status_code == 302
    generation = PlatformConnection.objects.get(seller=seller).generation
    seller_client.session[SESSION_STATE_KEY] = oauth_state_hash(state)  # even if re-bound

    replay = seller_client.get(CALLBACK_PATH, {"code": platform.mint_code(), "state": state})

    assert replay.status_code == 400
    assert PlatformConnection.objects.get(seller=seller).generation == generation
    assert "state" in last_event(seller).detail


def test_callback_with_another_sellers_state_is_refused(
    seller_client: Client, seller: Seller, other_seller: Seller, platform: Platform
) -> None:
    bob = Client()
    bob.force_login(other_seller.user)
    bobs_state = start(bob)
    start(seller_client)

    response = seller_client.get(
        CALLBACK_PATH, {"code": platform.mint_code(PLATFORM_SELLER_B), "state": bobs_state}
    )

    _refused(response, seller, "state other_seller")
    assert not PlatformConnection.objects.filter(seller=other_seller).exists()
    # Bob's state was not spent by Alice's attempt.
    assert OAuthState.objects.get(seller=other_seller).used_at is None


def test_callback_in_another_browser_session_is_refused(seller: Seller, platform: Platform) -> None:
    first, second = Client(), Client()
    first.force_login(seller.user)
    second.force_login(seller.user)
    state = start(first)
    response = second.get(CALLBACK_PATH, {"code": platform.mint_code(), "state": state})
    _refused(response, seller, "state session_mismatch")


def test_callback_access_denied_shows_friendly_page_with_retry(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    state = start(seller_client)
    response = seller_client.get(CALLBACK_PATH, {"error": "access_denied", "state": state})
    body = response.content.decode()
    assert response.status_code == 200
    assert "You did not approve access" in body
    assert 'id="retry-button"' in body
    assert not PlatformConnection.objects.filter(seller=seller).exists()
    assert "error=access_denied" in last_event(seller).detail


def test_callback_other_error_shows_friendly_page(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    state = start(seller_client)
    response = seller_client.get(
        CALLBACK_PATH,
        {"error": "server_error", "error_description": "try later", "state": state},
    )
    assert response.status_code == 400
    assert "did not complete the authorization" in response.content.decode()
    assert 'id="retry-button"' in response.content.decode()
    assert last_event(seller).detail == "platform answered error=server_error (try later)"


def test_callback_with_garbage_error_code_records_a_safe_name(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    state = start(seller_client)
    seller_client.get(CALLBACK_PATH, {"error": "<script>x</script>", "state": state})
    assert "error=unrecognised_error" in last_event(seller).detail


def test_callback_with_a_spent_code_is_an_error_page_not_a_crash(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    code = platform.mint_code()
    state = start(seller_client)
    assert seller_client.get(CALLBACK_PATH, {"code": code, "state": state}).status_code == 302
    state = start(seller_client)
    response = seller_client.get(CALLBACK_PATH, {"code": code, "state": state})
    assert response.status_code == 502
    assert "PlatformAuthError" in last_event(seller).detail


def test_callback_with_malformed_token_response_is_an_error_page(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    state = start(seller_client)
    platform.sandbox.set_faults(endpoint="access_token", kind="malformed_json", count=1)

    response = seller_client.get(CALLBACK_PATH, {"code": platform.mint_code(), "state": state})

    assert response.status_code == 502
    assert "The connection did not work" in response.content.decode()
    assert not PlatformConnection.objects.filter(seller=seller).exists()
    event = last_event(seller)
    assert event.kind == "connect_failed"
    assert "code exchange failed: PlatformUnavailable" in event.detail


def test_callback_when_the_token_endpoint_is_down_is_an_error_page(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    state = start(seller_client)
    platform.sandbox.set_faults(endpoint="access_token", kind="503", count=1)
    response = seller_client.get(CALLBACK_PATH, {"code": platform.mint_code(), "state": state})
    assert response.status_code == 502
    assert not PlatformConnection.objects.filter(seller=seller).exists()


def test_reconnect_replaces_the_grant_in_the_same_row(
    seller_client: Client, seller: Seller, platform: Platform
) -> None:
    state = start(seller_client)
    seller_client.get(CALLBACK_PATH, {"code": platform.mint_code(), "state": state})
    before = PlatformConnection.objects.get(seller=seller)
    old_access, old_refresh = before.access_token, before.refresh_token

    state = start(seller_client)
    seller_client.get(CALLBACK_PATH, {"code": platform.mint_code(), "state": state})

    after = PlatformConnection.objects.get(seller=seller)
    assert after.id == before.id
    assert after.generation == before.generation + 1
    assert after.access_token != old_access
    assert after.refresh_token != old_refresh
    assert PlatformConnection.objects.filter(seller=seller).count() == 1
    assert "reconnected" in last_event(seller).detail
