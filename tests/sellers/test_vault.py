"""Tokens at rest: only ciphertext in the database, and key rotation keeps them usable."""

from __future__ import annotations

from datetime import timedelta

import pytest
from cryptography.fernet import Fernet
from django.conf import settings
from django.core.management import call_command
from django.db import connection as db
from django.utils import timezone

from sellers import services, vault
from sellers.errors import VaultError
from sellers.models import ConnectionEvent, PlatformConnection, Seller
from tests.support.app_fixtures import Platform
from tests.support.factories import PlatformConnectionFactory

pytestmark = pytest.mark.django_db


def raw_row(connection_id: int) -> str:
    with db.cursor() as cursor:
        cursor.execute("SELECT * FROM sellers_platformconnection WHERE id = %s", [connection_id])
        return " ".join(str(value) for value in cursor.fetchone())


def test_database_row_holds_neither_token_in_clear(seller: Seller, platform: Platform) -> None:
    connection = platform.connect(seller)
    row = raw_row(connection.id)
    assert connection.access_token not in row
    assert connection.refresh_token not in row
    assert connection.access_token_ciphertext in row  # Fernet ciphertext is what is stored


def test_rotate_token_keys_reencrypts_so_the_old_key_can_go(
    seller: Seller, other_seller: Seller, platform: Platform, capsys: pytest.CaptureFixture
) -> None:
    connection = platform.connect(seller)
    access, refresh = connection.access_token, connection.refresh_token
    old_key = settings.TOKEN_ENCRYPTION_KEYS[0]
    new_key = Fernet.generate_key().decode()
    PlatformConnectionFactory(seller=other_seller, not_connected=True)  # nothing to rotate

    settings.TOKEN_ENCRYPTION_KEYS = [new_key, old_key]
    try:
        call_command("rotate_token_keys", "--batch-size", "1")
        out = capsys.readouterr().out
        assert "Re-encrypted 2 ciphertext(s)." in out  # the access and the refresh token
        assert "sellers.PlatformConnection: 1/1 rows checked" in out
        call_command("rotate_token_keys")  # idempotent
        assert "Re-encrypted 0 ciphertext(s)." in capsys.readouterr().out

        settings.TOKEN_ENCRYPTION_KEYS = [new_key]  # the old key is gone
        connection.refresh_from_db()
        assert connection.access_token == access
        assert connection.refresh_token == refresh
        assert ConnectionEvent.objects.filter(kind="key_rotated").count() == 1

        PlatformConnection.objects.filter(id=connection.id).update(
            access_token_expires_at=timezone.now() + timedelta(minutes=1)
        )
        refreshed = services.connection_refresh(connection_id=connection.id)
        assert refreshed.access_token != access
        settings.TOKEN_ENCRYPTION_KEYS = [old_key]
        with pytest.raises(VaultError):
            _ = PlatformConnection.objects.get(id=connection.id).access_token
    finally:
        settings.TOKEN_ENCRYPTION_KEYS = [old_key]


def test_fingerprint_is_short_and_stable() -> None:
    assert vault.token_fingerprint("abc") == vault.token_fingerprint("abc")
    assert len(vault.token_fingerprint("abc")) == 8
    assert vault.token_fingerprint("") == ""


def test_every_key_decrypts_and_the_first_encrypts(settings) -> None:
    a, b = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.TOKEN_ENCRYPTION_KEYS = [b]
    under_b = vault.token_encrypt("t")
    settings.TOKEN_ENCRYPTION_KEYS = [a, b]
    assert vault.token_decrypt(under_b) == "t"
    assert not vault.token_is_current(under_b)
    assert vault.token_is_current(vault.token_encrypt("t"))
