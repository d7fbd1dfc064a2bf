"""No token, code or client secret leaks into logs, e-mails, pages or the audit records
during a full connect → refresh → use → loss cycle."""

from __future__ import annotations

import logging
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from marketplace.log_redaction import redact
from marketplace.platform.models import PlatformCall
from sellers import services, vault
from sellers.errors import ReauthorizationRequired
from sellers.models import ConnectionEvent, PlatformConnection, Seller
from tests.support.app_fixtures import CLIENT_SECRET, PLATFORM_SELLER, Platform, page_text

pytestmark = pytest.mark.django_db


def test_full_cycle_leaks_no_secret(
    seller: Seller,
    staff_user,
    platform: Platform,
    caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks,
) -> None:
    # Every logger at DEBUG, including those settings.LOGGING quiets (urllib3).
    caplog.set_level(logging.DEBUG)
    for name in list(logging.root.manager.loggerDict):
        caplog.set_level(logging.DEBUG, logger=name)
    secrets: set[str] = {CLIENT_SECRET}
    pages: list[str] = []
    client = Client()
    client.force_login(seller.user)

    # Connect.
    state = parse_qs(urlsplit(client.post(reverse("sellers:connect"))["Location"]).query)["state"][
        0
    ]
    code = platform.mint_code()
    secrets.add(code)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.get(reverse("sellers:callback"), {"code": code, "state": state})
    assert response.status_code == 302
    connection = PlatformConnection.objects.get(seller=seller)
    secrets |= {connection.access_token, connection.refresh_token}
    pages.append(page_text(client.get(reverse("sellers:connection"))))

    # Refresh on use, then use the token on an order call.
    PlatformConnection.objects.filter(id=connection.id).update(
        access_token_expires_at=timezone.now() + timedelta(seconds=30)
    )
    token = services.connection_access_token(connection_id=connection.id)
    connection.refresh_from_db()
    secrets |= {token, connection.refresh_token}
    answer = requests.get(
        platform.sandbox.api_url + "/orders", headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )  # fmt: skip
    assert answer.status_code == 200
    logging.getLogger("tests").debug("order call answered %s", answer.status_code)

    # Lose the grant (the order call's 401 forces a refresh): e-mail and pages.
    fingerprint = vault.token_fingerprint(token)
    platform.sandbox.revoke(PLATFORM_SELLER)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ReauthorizationRequired):
        services.connection_refresh(
            connection_id=connection.id, force=True, stale_token_fingerprint=fingerprint
        )
    pages.append(page_text(client.get(reverse("sellers:connection"))))
    pages.append(page_text(client.get(reverse("sellers:portal"))))
    staff = Client()
    staff.force_login(staff_user)
    pages.append(
        page_text(
            staff.get(reverse("admin:sellers_platformconnection_change", args=[connection.id]))
        )
    )

    assert len(secrets) == 6
    assert len(mail.outbox) == 1
    records = [(r.getMessage(), r.exc_text or "", repr(r.args)) for r in caplog.records]
    # Logs were captured, including the HTTP library's.
    assert any("refreshed" in message for message, _, _ in records)
    assert any(r.name.startswith("urllib3") for r in caplog.records)
    haystacks = {
        "logs": "\n".join(" ".join(r) for r in records) + caplog.text,
        "mail": "\n".join(m.subject + m.body for m in mail.outbox),
        "pages": "\n".join(pages),
        "events": "\n".join(ConnectionEvent.objects.values_list("detail", flat=True)),
        "calls": "\n".join(
            " ".join(row)
            for row in PlatformCall.objects.values_list(
                "path", "error", "request_excerpt", "response_excerpt"
            )
        ),
    }
    for where, text in haystacks.items():
        for secret in secrets:
            assert secret not in text, f"a secret leaked into {where}"


def test_redaction_filter_covers_token_shapes_we_handle() -> None:
    line = (
        "POST /api/v1/access_token grant_type=refresh_token&refresh_token=rt_abc"
        "&client_secret=s3cr3t code=c0de "
        '{"access_token": "at_xyz", "refresh_token": "rt_def"} Authorization: Bearer at_xyz'
    )
    cleaned = redact(line)
    for secret in ("rt_abc", "s3cr3t", "c0de", "at_xyz", "rt_def"):
        assert secret not in cleaned


def test_the_oauth_state_in_a_logged_callback_url_is_redacted() -> None:
    import logging

    from marketplace.log_redaction import RedactSecretsFilter

    # Given the web server's access line for the OAuth callback
    record = logging.LogRecord(
        "django.server",
        logging.INFO,
        __file__,
        1,
        '"%s" %s %s',
        ("GET /sellers/connection/callback/?code=c0de-1&state=st4te-xyz HTTP/1.1", "302", "0"),
        None,
    )
    # When the redaction filter passes it on
    assert RedactSecretsFilter().filter(record) is True
    message = record.getMessage()
    # Then neither the code nor the state is in the line, and the rest still is
    assert "c0de-1" not in message
    assert "st4te-xyz" not in message
    assert "?code=[REDACTED]&state=[REDACTED] HTTP/1.1" in message
    assert '" 302 0' in message
    # A state outside a query string (an order's, a connection's) is no secret
    assert redact('{"state": "shipped"}') == '{"state": "shipped"}'
    assert redact("<PlatformApiAccess state=active>") == "<PlatformApiAccess state=active>"
    assert redact("/cb?state=s1&x=1 /cb?a=1&STATE=s2#f") == (
        "/cb?state=[REDACTED]&x=1 /cb?a=1&STATE=[REDACTED]#f"
    )
