"""Management commands: seed_demo (rotate_token_keys is covered in test_vault)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.test import Client, RequestFactory

from sellers.models import Seller

pytestmark = pytest.mark.django_db


def test_seed_demo_creates_demo_users_idempotently(capsys: pytest.CaptureFixture) -> None:
    call_command("seed_demo", "--skip-sandbox")
    call_command("seed_demo", "--skip-sandbox")

    out = capsys.readouterr().out
    assert "admin / admin-demo-pass" in out
    assert "seller / seller-demo-pass" in out
    # Sign-in throttling (django-axes) needs the request whose address it counts.
    request = RequestFactory().post("/sellers/login/")
    admin = authenticate(request, username="admin", password="admin-demo-pass")
    assert admin is not None
    assert admin.is_staff
    assert admin.is_superuser
    seller = authenticate(request, username="seller", password="seller-demo-pass")
    assert seller.seller.display_name == "Demo Seller"
    assert authenticate(request, username="seller2", password="seller2-demo-pass") is not None
    assert get_user_model().objects.count() == 3
    assert Seller.objects.count() == 2


def test_seed_demo_keeps_an_existing_password_and_session(
    capsys: pytest.CaptureFixture,
) -> None:
    # Given the demo seeded, a seller who changed their password and is signed in
    call_command("seed_demo", "--skip-sandbox")
    user = get_user_model().objects.get(username="seller")
    user.set_password("my-own-pass")
    user.save()
    client = Client()
    client.force_login(user)
    assert client.get("/sellers/").status_code == 200
    # When make run seeds again
    call_command("seed_demo", "--skip-sandbox")
    # Then their password and their session stay (the session's hash is of the password)
    request = RequestFactory().post("/sellers/login/")
    assert authenticate(request, username="seller", password="my-own-pass") is not None
    assert authenticate(request, username="seller", password="seller-demo-pass") is None
    assert client.get("/sellers/").status_code == 200
    # and a demo user that was missing is created again
    get_user_model().objects.filter(username="seller2").delete()
    call_command("seed_demo", "--skip-sandbox")
    assert authenticate(request, username="seller2", password="seller2-demo-pass") is not None
    assert Seller.objects.get(user__username="seller2").display_name == "Second Demo Seller"


@pytest.mark.slow
def test_seed_demo_registers_the_client_and_seller_in_the_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture, settings
) -> None:
    db = tmp_path / "sandbox.sqlite3"
    call_command("seed_demo", "--sandbox-db", str(db))
    out = capsys.readouterr().out
    assert f"client {settings.PLATFORM_CLIENT_ID} registered" in out
    assert settings.PLATFORM_REDIRECT_URL in out
    assert settings.PLATFORM_CLIENT_SECRET not in out
    assert db.exists()
