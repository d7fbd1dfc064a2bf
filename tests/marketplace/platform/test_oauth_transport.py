"""OAuth's token calls go through the one transport (call log, embargo, error mapping),
at their own base URL; the order client takes its tokens from a ``TokenSource``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from marketplace.platform import oauth
from marketplace.platform.embargo import embargo_remaining
from marketplace.platform.errors import PlatformRateLimited
from marketplace.platform.models import PlatformCall
from marketplace.platform.order_source import OrderSourceClient
from tests.marketplace.platform.conftest import Answer, TinyPlatform, embargo_clear

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
CLIENT_ID = "tiny-marketplace"
CLIENT_SECRET = "tiny-marketplace-secret-5f2a9c"
GRANT = {
    "access_token": "at-3c9e1f7a2b8d4e6f",
    "refresh_token": "rt-8b2d4f6a1c3e5a7b",
    "expires_in": 3600,
    "token_type": "Bearer",
}
TOKEN_PATH = "/api/v1/access_token"


@pytest.fixture
def token_endpoint(settings: Any, tiny_platform: TinyPlatform, no_embargo: None) -> TinyPlatform:
    settings.PLATFORM_OAUTH_BASE_URL = tiny_platform.url + "/api/v1"
    settings.PLATFORM_CLIENT_ID = CLIENT_ID
    settings.PLATFORM_CLIENT_SECRET = CLIENT_SECRET
    return tiny_platform


def test_token_calls_are_logged_scrubbed_and_wait_when_the_platform_asks(
    token_endpoint: TinyPlatform,
) -> None:
    # Given a token endpoint that first asks us to wait 30 s, then answers
    token_endpoint.answer(
        "POST",
        TOKEN_PATH,
        Answer(
            429,
            '{"error": "rate_limited", "message": "slow down"}',
            {"Content-Type": "application/json", "Retry-After": "30"},
        ),
        Answer(200, json.dumps(GRANT)),
    )
    # When a refresh meets the 429
    with pytest.raises(PlatformRateLimited) as limited:
        oauth.token_refresh(refresh_token="rt-secret-of-the-seller-1")
    assert limited.value.retry_after == 30
    # Then every token call of this client is held, and none is sent
    holder = oauth.oauth_client_holder(CLIENT_ID)
    assert 29 < embargo_remaining(holder=holder) <= 30.01
    with pytest.raises(PlatformRateLimited) as held:
        oauth.token_exchange_code(code="code-secret-2")
    assert held.value.code == "held"
    assert len(token_endpoint.requests_to(TOKEN_PATH)) == 1

    # When the wait is over, the code exchange goes through the same transport
    embargo_clear()
    tokens = oauth.token_exchange_code(code="code-secret-2")
    assert tokens == oauth.TokenSet(
        access_token=GRANT["access_token"], refresh_token=GRANT["refresh_token"], expires_in=3600
    )
    sent = token_endpoint.requests_to(TOKEN_PATH)[-1]
    assert sent.headers["Content-Type"].startswith("application/x-www-form-urlencoded")
    assert "Authorization" not in sent.headers
    assert parse_qs(sent.body) == {
        "grant_type": ["authorization_code"],
        "code": ["code-secret-2"],
        "client_id": [CLIENT_ID],
        "client_secret": [CLIENT_SECRET],
    }

    # And the call log has both answers, by path and status, without a secret
    calls = list(PlatformCall.objects.order_by("id"))
    assert [(c.method, c.path, c.status) for c in calls] == [
        ("POST", TOKEN_PATH, 429),
        ("POST", TOKEN_PATH, 200),
    ]
    secrets = (
        CLIENT_SECRET,
        "rt-secret-of-the-seller-1",
        "code-secret-2",
        GRANT["access_token"],
        GRANT["refresh_token"],
    )
    for call in calls:
        logged = f"{call.path} {call.error} {call.request_excerpt} {call.response_excerpt}"
        for secret in secrets:
            assert secret not in logged


class RecordingTokens:
    """A ``marketplace.platform.tokens.TokenSource`` (structurally): a fixed token that is
    replaced once the platform refuses it."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.rejected: list[str] = []

    def access_token(self) -> str:
        return self.token

    def refresh_after_unauthorized(self, *, rejected_token: str) -> None:
        self.rejected.append(rejected_token)
        self.token = "at-renewed"


def test_a_slow_token_answer_is_waited_for_longer_than_other_calls(
    token_endpoint: TinyPlatform, settings: Any
) -> None:
    # Given other calls give up after 0.3 s, token calls after 5 s
    settings.PLATFORM_READ_TIMEOUT = 0.3
    settings.PLATFORM_TOKEN_READ_TIMEOUT = 5.0
    # and a token endpoint that rotates the refresh token but answers after 1 s
    token_endpoint.answer("POST", TOKEN_PATH, Answer(200, json.dumps(GRANT), delay=1.0))
    # When the refresh is sent
    tokens = oauth.token_refresh(refresh_token="rt-spent-by-this-refresh")
    # Then its answer is not lost (a lost one would leave us holding a spent refresh token)
    assert tokens.refresh_token == GRANT["refresh_token"]
    assert PlatformCall.objects.get(path=TOKEN_PATH).status == 200


def test_the_oauth_base_url_moves_only_oauth(
    settings: Any,
    token_endpoint: TinyPlatform,
    other_tiny_platform: TinyPlatform,
    seller: Any,
) -> None:
    # Given the order interface at another version on another host, OAuth where it was
    orders = other_tiny_platform
    settings.PLATFORM_BASE_URL = orders.url + "/api/v2"
    token_endpoint.answer("POST", TOKEN_PATH, Answer(200, json.dumps(GRANT)))
    orders.answer(
        "GET",
        "/api/v2/orders",
        Answer(401, '{"message": "token expired"}'),
        Answer(200, '{"orders": [], "next_cursor": null}'),
    )
    # When a seller is sent to authorize, and the code is spent
    authorize = urlsplit(oauth.authorization_url(state="s-1"))
    tokens = oauth.token_exchange_code(code="c-1", seller_id=seller.id)
    # Then both went to the OAuth base
    assert f"{authorize.scheme}://{authorize.netloc}{authorize.path}" == (
        token_endpoint.url + "/api/v1/authorize"
    )
    assert [r.path for r in token_endpoint.received] == [TOKEN_PATH]

    # When the order client lists orders with that grant (refused once, then renewed)
    source = RecordingTokens(tokens.access_token)
    client = OrderSourceClient(seller_id=seller.id, tokens=source)
    page = client.list_orders(page_size=10)
    # Then the order calls went to the order interface's base only
    assert page == {"orders": [], "next_cursor": None}
    assert [r.path for r in orders.received] == ["/api/v2/orders", "/api/v2/orders"]
    assert [r.headers["Authorization"] for r in orders.received] == [
        f"Bearer {GRANT['access_token']}",
        "Bearer at-renewed",
    ]
    assert source.rejected == [GRANT["access_token"]]
    assert [r.path for r in token_endpoint.received] == [TOKEN_PATH]


def _settings_value(name: str, env: dict[str, str]) -> str:
    dropped = {"PLATFORM_BASE_URL", "PLATFORM_OAUTH_BASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in dropped}
    result = subprocess.run(
        [sys.executable, "-c", f"import marketplace.settings as s; print(s.{name})"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_oauth_base_url_defaults_to_the_order_interfaces() -> None:
    order_base = "https://platform.example.com/api/v1"
    assert _settings_value("PLATFORM_OAUTH_BASE_URL", {"PLATFORM_BASE_URL": order_base}) == (
        order_base
    )
    assert (
        _settings_value(
            "PLATFORM_OAUTH_BASE_URL",
            {
                "PLATFORM_BASE_URL": "https://platform.example.com/api/v2",
                "PLATFORM_OAUTH_BASE_URL": order_base + "/",
            },
        )
        == order_base
    )
