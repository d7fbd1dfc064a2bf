"""A platform callback that arrives without a signed-in session: the unspent code and
the state must not travel on, neither in a redirect nor in a log line."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, quote, quote_plus, urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from sellers.models import OAuthState, PlatformConnection, Seller
from tests.support.app_fixtures import CALLBACK_PATH, Platform

pytestmark = pytest.mark.django_db


def _spellings(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), quote_plus(secret), quote(quote(secret, safe=""))}


def test_callback_without_a_session_asks_to_sign_in_and_keeps_code_and_state_nowhere(
    seller_client: Client, seller: Seller, platform: Platform, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a seller who pressed Connect, and a browser whose session ended meanwhile
    started = seller_client.post(reverse("sellers:connect"))
    state = parse_qs(urlsplit(started["Location"]).query)["state"][0]
    code = platform.mint_code()
    caplog.set_level(logging.DEBUG)

    # When the platform sends that browser back with the code and the state
    response = Client().get(CALLBACK_PATH, {"code": code, "state": state})

    # Then it is told to sign in and connect again, with no redirect at all
    assert response.status_code == 403
    assert "Location" not in response
    assert "Sign in and connect again" in response.content.decode()
    # and neither the code nor the state, in any spelling, reached a log line or the page
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for secret in (code, state):
        for spelling in _spellings(secret):
            assert spelling not in logged
            assert spelling not in response.content.decode()
    # and nothing was spent or stored: connecting again from a session works as usual
    assert OAuthState.objects.get(seller=seller).used_at is None
    assert not PlatformConnection.objects.filter(seller=seller).exists()


def test_a_signed_out_callback_never_redirects_even_without_parameters() -> None:
    response = Client().get(CALLBACK_PATH)
    assert response.status_code == 403
    assert "Location" not in response
