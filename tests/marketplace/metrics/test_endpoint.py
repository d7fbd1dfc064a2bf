"""``/metrics`` is never public: off without a token, 401 without the right one."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db

TOKEN = "m" * 40


def test_with_no_token_configured_the_endpoint_is_off_for_everyone(client: Client) -> None:
    # Given the default configuration (no METRICS_TOKEN)
    with override_settings(METRICS_TOKEN=""):
        # When anyone scrapes, with or without a bearer token
        anonymous = client.get("/metrics")
        guessing = client.get("/metrics", HTTP_AUTHORIZATION="Bearer ")
    # Then the endpoint does not exist
    assert anonymous.status_code == 404
    assert guessing.status_code == 404
    assert b"marketplace_" not in anonymous.content


@override_settings(METRICS_TOKEN=TOKEN)
def test_an_anonymous_scrape_is_refused(client: Client) -> None:
    response = client.get("/metrics")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert response.content == b"a bearer token is required\n"


@override_settings(METRICS_TOKEN=TOKEN)
@pytest.mark.parametrize(
    "header",
    [f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN, "Bearer"],
    ids=["one-short", "one-long", "wrong-scheme", "no-scheme", "empty"],
)
def test_a_wrong_token_is_refused(client: Client, header: str) -> None:
    response = client.get("/metrics", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert b"marketplace_" not in response.content


@override_settings(METRICS_TOKEN=TOKEN)
def test_the_right_token_gets_the_text_exposition(client: Client) -> None:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert "no-cache" in response["Cache-Control"] or "no-store" in response["Cache-Control"]
    body = response.content.decode()
    assert "# HELP marketplace_orders_waiting_to_push " in body
    assert "# TYPE marketplace_orders_waiting_to_push gauge" in body
    # No session is started for a scrape.
    assert "sessionid" not in response.cookies


@override_settings(METRICS_TOKEN=TOKEN)
def test_only_get_is_served(client: Client) -> None:
    response = client.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 405
