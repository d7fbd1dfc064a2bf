"""marketplace.platform.oauth: the token endpoint client, against the sandbox and, for
answers the sandbox cannot give, a local fake transport."""

from __future__ import annotations

import json
import sys
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.views.debug import ExceptionReporter
from requests.adapters import BaseAdapter

from marketplace.platform import oauth, transport
from marketplace.platform.errors import (
    PlatformAuthError,
    PlatformError,
    PlatformMalformedResponse,
    PlatformRateLimited,
    PlatformRejected,
    PlatformUnavailable,
    retry_after_seconds,
)
from marketplace.platform.models import PlatformCall
from marketplace.platform.transport import thread_session
from marketplace.redis_client import redis_client
from tests.support.app_fixtures import CLIENT_ID, CLIENT_SECRET, REDIRECT_URL, Platform

pytestmark = pytest.mark.django_db


class FakeTokenEndpoint(BaseAdapter):
    """Answers every request with a fixed status/body and remembers what was sent."""

    def __init__(self, status: int, body: str, headers: dict | None = None) -> None:
        super().__init__()
        self.status, self.body, self.headers = status, body, headers or {}
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request, **kwargs):
        self.sent.append(request)
        response = requests.Response()
        response.status_code = self.status
        response._content = self.body.encode()
        response.headers.update({"Content-Type": "application/json", **self.headers})
        response.url = request.url
        response.request = request
        return response

    def close(self) -> None:
        pass


@pytest.fixture
def fake(settings):
    settings.PLATFORM_OAUTH_BASE_URL = "http://platform.invalid/api/v1"
    settings.PLATFORM_CLIENT_ID = CLIENT_ID
    settings.PLATFORM_CLIENT_SECRET = CLIENT_SECRET

    def install(status: int, body: object, headers: dict | None = None) -> FakeTokenEndpoint:
        adapter = FakeTokenEndpoint(
            status, body if isinstance(body, str) else json.dumps(body), headers
        )
        thread_session("http://platform.invalid").mount("http://platform.invalid/", adapter)
        return adapter

    yield install
    # A 429 leaves the token calls held: Redis outlives the test's transaction.
    if settings.REDIS_URL:
        for key in redis_client().scan_iter("embargo:oauth-client:*"):
            redis_client().delete(key)
    # Drop the session with the fake mounted.
    transport._thread.sessions.pop("http://platform.invalid", None)


def test_authorization_url_has_exactly_the_contract_parameters(platform: Platform) -> None:
    url = urlsplit(oauth.authorization_url(state="s-123"))
    assert url.path == "/api/v1/authorize"
    assert parse_qs(url.query) == {
        "response_type": ["code"],
        "client_id": [CLIENT_ID],
        "redirect_url": [REDIRECT_URL],
        "state": ["s-123"],
    }


def test_code_exchange_sends_form_encoded_client_secret_post(fake) -> None:
    endpoint = fake(200, {"access_token": "a1", "refresh_token": "r1", "expires_in": 3600,
                          "token_type": "Bearer"})  # fmt: skip
    tokens = oauth.token_exchange_code(code="the-code")

    assert tokens == oauth.TokenSet(access_token="a1", refresh_token="r1", expires_in=3600)
    sent = endpoint.sent[0]
    assert sent.url == "http://platform.invalid/api/v1/access_token"
    assert sent.headers["Content-Type"].startswith("application/x-www-form-urlencoded")
    assert "Authorization" not in sent.headers
    assert parse_qs(sent.body) == {
        "grant_type": ["authorization_code"],
        "code": ["the-code"],
        "client_id": [CLIENT_ID],
        "client_secret": [CLIENT_SECRET],
    }


def test_token_set_repr_shows_no_tokens() -> None:
    tokens = oauth.TokenSet(access_token="secret-a", refresh_token="secret-r", expires_in=5)
    assert "secret" not in repr(tokens)


@pytest.mark.parametrize(
    "body",
    [
        {"refresh_token": "r", "expires_in": 3600},  # no access_token
        {"access_token": "a", "refresh_token": "r"},  # no expires_in
        {"access_token": "a", "refresh_token": "r", "expires_in": "soon"},
        {"access_token": "a", "expires_in": 3600},  # a new grant without refresh token
        {"access_token": "a", "refresh_token": "r", "expires_in": 3600, "token_type": "mac"},
    ],
)
def test_code_exchange_answer_lacking_fields_is_malformed(fake, body: dict) -> None:
    fake(200, body)
    with pytest.raises(PlatformMalformedResponse):
        oauth.token_exchange_code(code="c")


def test_refresh_answer_without_refresh_token_means_not_rotated(fake) -> None:
    fake(200, {"access_token": "a2", "expires_in": 3600, "token_type": "Bearer"})
    tokens = oauth.token_refresh(refresh_token="old-r")
    assert tokens.access_token == "a2"
    assert tokens.refresh_token is None


@pytest.mark.parametrize(
    ("status", "body", "headers", "error", "code"),
    [
        (401, {"error": "invalid_grant"}, {}, PlatformAuthError, "invalid_grant"),
        (400, {"error": "invalid_grant"}, {}, PlatformAuthError, "invalid_grant"),
        (401, {"error": "invalid_client"}, {}, PlatformAuthError, "invalid_client"),
        (400, {"error": "invalid_request"}, {}, PlatformRejected, "invalid_request"),
        (429, "slow down", {"Retry-After": "7"}, PlatformRateLimited, None),
        (500, "<html>oops</html>", {}, PlatformUnavailable, None),
        (503, "", {}, PlatformUnavailable, None),
        (200, "<html>proxy page</html>", {}, PlatformUnavailable, None),
        (200, "[1, 2]", {}, PlatformUnavailable, None),
    ],
)
def test_refresh_errors_map_to_platform_error_classes(
    fake,
    status: int,
    body: object,
    headers: dict,
    error: type,
    code: str | None,
) -> None:
    fake(status, body, headers)
    with pytest.raises(error) as caught:
        oauth.token_refresh(refresh_token="r")
    assert caught.value.code == code
    if status == 429:
        assert caught.value.retry_after == 7


def test_connection_error_is_transient(settings) -> None:
    settings.PLATFORM_OAUTH_BASE_URL = "http://127.0.0.1:9/api/v1"  # discard port: refused
    with pytest.raises(PlatformUnavailable):
        oauth.token_refresh(refresh_token="r")
    # No answer: the refresh may have been carried out, so it is asked once more (and
    # only once) with the same token; both calls are logged
    calls = list(PlatformCall.objects.order_by("id"))
    assert [call.status for call in calls] == [None, None]
    assert all("ConnectionError" in call.error for call in calls)


def test_every_token_call_is_logged_by_path_without_bodies(fake) -> None:
    fake(401, {"error": "invalid_grant", "error_description": "unknown refresh token"})
    with pytest.raises(PlatformAuthError):
        oauth.token_refresh(refresh_token="super-secret-refresh")
    call = PlatformCall.objects.get()
    assert (call.method, call.path, call.status) == ("POST", "/api/v1/access_token", 401)
    assert call.request_excerpt == call.response_excerpt == ""
    assert "super-secret" not in call.error


def test_refresh_against_sandbox_with_unknown_token_is_auth_error(platform: Platform) -> None:
    with pytest.raises(PlatformAuthError) as caught:
        oauth.token_refresh(refresh_token="rt-not-a-real-one")
    assert caught.value.status == 401
    assert caught.value.code == "invalid_grant"


def test_rate_limit_reset_header_is_read_as_seconds_or_epoch() -> None:
    assert retry_after_seconds({"X-Rate-Limit-Reset": "12"}) == 12
    assert retry_after_seconds({"X-Rate-Limit-Reset": "1000100"}, now=1_000_000) == 100
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=0) > 0
    assert retry_after_seconds({}) is None


@pytest.mark.parametrize("status", [401, 503, 200])
def test_error_reports_of_failed_token_calls_show_no_secret(fake, settings, status: int) -> None:
    settings.DEBUG = False  # error reports (e-mails, 500 pages) as in production
    fake(status, {"error": "invalid_grant"} if status != 200 else {"access_token": 1})
    for call in (
        lambda: oauth.token_exchange_code(code="secret-code-123"),
        lambda: oauth.token_refresh(refresh_token="secret-refresh-456"),
    ):
        try:
            call()
        except PlatformError:
            exc_type, exc, tb = sys.exc_info()
            # From the token function down: the test's own frame holds the secrets.
            report = ExceptionReporter(None, exc_type, exc, tb.tb_next.tb_next).get_traceback_text()
        else:
            pytest.fail("the token call should have failed")
        for secret in ("secret-code-123", "secret-refresh-456", CLIENT_SECRET):
            assert secret not in report
        assert "authlib" not in report  # no third-party frame with the form body
