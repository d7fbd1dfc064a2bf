"""Issue 21: an answer we cannot read is described (status, size, type), never quoted.

A PHP notice before the JSON of the second ``/login`` answer once carried the new API
token into the error message, and from there into the flash message (the messages
cookie is signed, not encrypted), stored errors and logs. A real server in a thread
answers as that platform did; the token must appear nowhere.
"""

from __future__ import annotations

import io
import json
import logging
import traceback
from typing import Any

import pytest
from django.contrib.messages.storage.cookie import CookieStorage
from django.core.management import call_command
from django.test import Client, RequestFactory
from django.urls import reverse

from marketplace.platform import auth_api
from marketplace.platform.errors import PlatformUnavailable
from marketplace.platform.models import PlatformCall
from tests.marketplace.platform.conftest import Answer, TinyPlatform

pytestmark = pytest.mark.django_db

API_TOKEN = "9f8e7d6c5b4a39281706f5e4d3c2b1a0feedc0de"
NOTICE = (
    "<br />\n<b>Notice</b>:  Undefined index: name in <b>/var/www/api.php</b> "
    "on line <b>88</b><br />\n"
)
HTML = {"Content-Type": "text/html; charset=UTF-8"}
CODE_SENT = Answer(200, '{"status": "success", "message": "A code was sent to a***@example.com"}')


@pytest.fixture
def api_platform(settings: Any, tiny_platform: TinyPlatform, no_embargo: None) -> TinyPlatform:
    settings.PLATFORM_API_BASE_URL = tiny_platform.url + "/api.php"
    settings.PLATFORM_API_RATE_PER_SECOND = 1000.0
    return tiny_platform


@pytest.fixture
def staff_client(staff_user: Any) -> Client:
    client = Client()
    client.force_login(staff_user)
    return client


def flashed(cookie_value: str) -> list[str]:
    """The messages in the signed messages cookie, decoded as the app would."""
    storage = CookieStorage(RequestFactory().get("/"))
    decoded = storage._decode(cookie_value)
    assert decoded is not None, "the messages cookie does not decode"
    return [str(message.message) for message in decoded]


def everything_stored() -> str:
    out = io.StringIO()
    call_command("dumpdata", stdout=out)
    return out.getvalue()


def call_log_text() -> str:
    return "\n".join(
        f"{c.path} {c.error} {c.request_excerpt} {c.response_excerpt}"
        for c in PlatformCall.objects.all()
    )


def test_a_login_answer_with_a_notice_before_the_json_leaves_the_token_nowhere(
    api_platform: TinyPlatform, staff_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    body = NOTICE + json.dumps({"status": "success", "token": API_TOKEN})
    api_platform.answer("POST", "/api.php/login", CODE_SENT, Answer(200, body, HTML))
    described = f"the platform answered 200 with {len(body)} bytes that are not JSON (text/html)"

    # When staff sign in and the platform's second answer is not clean JSON
    started = staff_client.post(
        reverse("catalog:api_access_start"), {"username": "api-user", "password": "api-pass-1"}
    )
    assert started.status_code == 302
    finished = staff_client.post(reverse("catalog:api_access_finish"), {"code": "123456"})
    assert finished.status_code == 302
    assert finished["Location"] == reverse("catalog:api_access")

    # Then the flash message says what kind of answer it was, and nothing of it
    messages = flashed(staff_client.cookies["messages"].value)
    assert any(described in message for message in messages), messages
    assert all(API_TOKEN not in message for message in messages)
    page = staff_client.get(reverse("catalog:api_access"))
    assert page.status_code == 200
    assert described in page.content.decode()
    assert API_TOKEN not in page.content.decode()

    # And the exception itself, with its chain, never carries it
    with pytest.raises(PlatformUnavailable) as caught:
        auth_api.login_finish(
            username="api-user", password="api-pass-1", code="123456", token_name="t"
        )
    assert str(caught.value) == f"{described} · HTTP 200"
    assert API_TOKEN not in "".join(traceback.format_exception(caught.value))

    # Nor the call log, the log output, or anything stored
    assert len(api_platform.requests_to("/api.php/login")) == 3
    assert PlatformCall.objects.filter(path="/login").count() == 3
    assert API_TOKEN not in call_log_text()
    assert API_TOKEN not in caplog.text
    assert API_TOKEN not in everything_stored()


def test_an_unreadable_or_refusing_accounts_answer_echoing_the_token_is_not_kept(
    api_platform: TinyPlatform, staff_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    # Given staff signed in with a token the platform later echoes in its answers
    api_platform.answer(
        "POST",
        "/api.php/login",
        CODE_SENT,
        Answer(200, json.dumps({"status": "success", "token": API_TOKEN})),
    )
    for step, data in (
        ("catalog:api_access_start", {"username": "api-user", "password": "api-pass-1"}),
        ("catalog:api_access_finish", {"code": "123456"}),
    ):
        assert staff_client.post(reverse(step), data).status_code == 302
    warning = f"<b>Warning</b>: token {API_TOKEN} used from a new address<br />\n"
    unreadable = warning + '[{"id": "7", "account_name": "Shop"}]'
    refusing = f"<html><body>Unauthorized: x-api-key={API_TOKEN}</body></html>"
    api_platform.answer(
        "GET",
        "/api.php/user/accounts",
        Answer(200, unreadable, HTML),
        Answer(401, refusing, HTML),
    )

    # When staff check the access twice: an unreadable answer, then a refusal
    for _ in range(2):
        checked = staff_client.post(reverse("catalog:api_access_check"))
        assert checked.status_code == 302
        messages = flashed(staff_client.cookies["messages"].value)
        assert all(API_TOKEN not in message for message in messages)
        page = staff_client.get(reverse("catalog:api_access"))
        assert page.status_code == 200
        assert API_TOKEN not in page.content.decode()

    # Then the refusal is told in the platform-neutral words, and the token is nowhere
    assert any(
        "the platform answered 401 with" in message and "(text/html)" in message
        for message in messages
    ), messages
    assert len(api_platform.requests_to("/api.php/user/accounts")) == 2
    assert API_TOKEN not in call_log_text()
    assert "needs sign-in" in caplog.text  # the refusal was logged, without the token
    assert API_TOKEN not in caplog.text
    assert API_TOKEN not in everything_stored()
