"""``PLATFORM_TOKEN_BODY``: the token calls (connect and refresh) sent form-encoded or as
JSON, against the sandbox's three readings of the token body (both, JSON only, form only),
over HTTP; and the clear failure when the two disagree."""

from __future__ import annotations

import json

import pytest

from marketplace.platform import oauth
from marketplace.platform.errors import PlatformError
from tests.marketplace.platform.test_oauth import fake
from tests.support.app_fixtures import CLIENT_ID, CLIENT_SECRET, PLATFORM_SELLER, Platform

__all__ = ["fake"]  # a fixture used below

pytestmark = pytest.mark.django_db

WORKING = [("form", "A"), ("json", "A"), ("json", "B"), ("form", "C")]
DISAGREEING = [
    ("form", "B", "application/json"),
    ("json", "C", "application/x-www-form-urlencoded"),
]


def token_body_switch(platform: Platform, reading: str) -> None:
    answer = platform.sandbox.control("POST", "/token-body", {"reading": reading})
    assert answer == {"reading": reading}


@pytest.mark.parametrize(("body", "reading"), WORKING)
def test_connect_and_refresh_work_when_the_bodies_agree(
    platform: Platform, settings, body: str, reading: str
) -> None:
    settings.PLATFORM_TOKEN_BODY = body
    token_body_switch(platform, reading)

    connected = oauth.token_exchange_code(code=platform.mint_code())
    refreshed = oauth.token_refresh(refresh_token=connected.refresh_token or "")

    assert connected.access_token
    assert connected.expires_in == 3600
    assert refreshed.access_token
    assert refreshed.access_token != connected.access_token
    assert refreshed.refresh_token  # the sandbox rotates: the new one is handed back
    assert platform.counters()["token_requests"]["refresh_token"] == 1


@pytest.mark.parametrize(("body", "reading", "wanted"), DISAGREEING)
def test_a_body_the_platform_does_not_take_fails_clearly(
    platform: Platform, settings, body: str, reading: str, wanted: str
) -> None:
    settings.PLATFORM_TOKEN_BODY = body
    token_body_switch(platform, reading)

    with pytest.raises(PlatformError) as connecting:
        oauth.token_exchange_code(code=platform.mint_code())
    issued = platform.sandbox.mint_tokens(CLIENT_ID, PLATFORM_SELLER)
    with pytest.raises(PlatformError) as refreshing:
        oauth.token_refresh(refresh_token=issued["refresh_token"])

    for caught in (connecting.value, refreshing.value):
        assert caught.status == 400
        assert not caught.transient  # retrying the same body cannot help
        assert f"the token request must be {wanted}" in str(caught)
        assert f"(sent as {body}: see PLATFORM_TOKEN_BODY)" in str(caught)


def test_the_json_body_holds_exactly_the_form_fields(fake, settings) -> None:
    settings.PLATFORM_TOKEN_BODY = "json"
    endpoint = fake(200, {"access_token": "a2", "refresh_token": "r2", "expires_in": 3600,
                          "token_type": "Bearer"})  # fmt: skip

    oauth.token_refresh(refresh_token="the-refresh")

    sent = endpoint.sent[0]
    assert sent.headers["Content-Type"] == "application/json"
    assert "Authorization" not in sent.headers
    assert int(sent.headers["Content-Length"]) == len(sent.body)
    assert json.loads(sent.body) == {
        "grant_type": "refresh_token",
        "refresh_token": "the-refresh",
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
    }
