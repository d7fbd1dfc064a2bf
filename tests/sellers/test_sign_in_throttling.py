"""Sign-in throttling (django-axes): wrong passwords lock the username at that address out
for a while, with a page that says so; then, or from elsewhere, the right password works."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client
from django.utils import timezone

from sellers.models import Seller

pytestmark = pytest.mark.django_db

LOGIN = "/sellers/login/"


def attempt(client: Client, password: str, address: str = "203.0.113.7") -> Any:
    return client.post(LOGIN, {"username": "alice", "password": password}, REMOTE_ADDR=address)


def test_wrong_passwords_lock_the_account_at_that_address_for_a_while(seller: Seller) -> None:
    client = Client()
    limit = settings.AXES_FAILURE_LIMIT
    for _ in range(limit - 1):
        response = attempt(client, "wrong-guess")
        assert response.status_code == 200
        assert "Please enter a correct username and password" in response.content.decode()
    # The limit-th wrong password locks out, with a clear message ...
    response = attempt(client, "wrong-guess")
    assert response.status_code == 429
    body = response.content.decode()
    assert "Too many sign-in attempts" in body
    assert "15 min" in body
    # ... and while locked, even the right password does not sign in
    response = attempt(client, "alice-pass-123")
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    # Another address is not locked out of this account
    other = Client()
    response = attempt(other, "alice-pass-123", address="198.51.100.9")
    assert response.status_code == 302
    assert "_auth_user_id" in other.session


def test_after_the_cool_off_the_right_password_works_again(seller: Seller) -> None:
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        attempt(client, "wrong-guess")
    assert attempt(client, "alice-pass-123").status_code == 429
    # The cool-off passes (the attempts are older than it)
    AccessAttempt.objects.update(
        attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )
    response = attempt(client, "alice-pass-123")
    assert response.status_code == 302
    assert "_auth_user_id" in client.session
