"""The token vault: Fernet encryption of stored tokens with rotatable keys.

``settings.TOKEN_ENCRYPTION_KEYS`` is a list of Fernet keys; the first encrypts, all
decrypt (``MultiFernet``). To rotate: put a new key first, run
``manage.py rotate_token_keys`` (re-encrypts every token with it), then drop the old key.

Every model field that stores vault ciphertext is an ``EncryptedTextField``: the rotation
finds them all by introspection (``encrypted_fields``), so a field added later is rotated
too, and ``tests/sellers/test_key_rotation.py`` fails when ciphertext is stored anywhere
else.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.db.models.expressions import Combinable
from django.views.decorators.debug import sensitive_variables

from sellers.errors import VaultError


class EncryptedTextField(models.TextField[str | Combinable, str]):
    """Text holding vault ciphertext (``token_encrypt``), never plaintext: the marker the
    key rotation finds its fields by. Stored as a plain text column."""


def encrypted_fields() -> dict[type[models.Model], list[str]]:
    """Every model of the project with ``EncryptedTextField`` columns, and their names."""
    found: dict[type[models.Model], list[str]] = {}
    for model in apps.get_models():
        names = [
            field.name
            for field in model._meta.get_fields()
            if isinstance(field, EncryptedTextField)
        ]
        if names:
            found[model] = names
    return found


@lru_cache(maxsize=4)
def _multifernet(keys: tuple[str, ...]) -> MultiFernet:
    if not keys:
        raise ImproperlyConfigured("TOKEN_ENCRYPTION_KEYS is empty")
    try:
        return MultiFernet([Fernet(key) for key in keys])
    except ValueError as exc:
        # Never echo the key material itself.
        raise ImproperlyConfigured(
            "TOKEN_ENCRYPTION_KEYS holds a value that is not a Fernet key"
        ) from exc


def _fernet() -> MultiFernet:
    # Keyed on the current setting so override_settings (tests, rotation) takes effect.
    return _multifernet(tuple(settings.TOKEN_ENCRYPTION_KEYS))


@sensitive_variables()
def token_encrypt(plaintext: str) -> str:
    return _fernet().encrypt(plaintext.encode()).decode("ascii")


@sensitive_variables()
def token_decrypt(ciphertext: str) -> str:
    if not ciphertext:
        return ""
    try:
        return _fernet().decrypt(ciphertext.encode("ascii")).decode()
    except InvalidToken as exc:
        raise VaultError("stored token cannot be decrypted with the configured keys") from exc


@sensitive_variables()
def token_reencrypt(ciphertext: str) -> str:
    """The same token encrypted with the first key (``MultiFernet.rotate``)."""
    if not ciphertext:
        return ""
    try:
        return _fernet().rotate(ciphertext.encode("ascii")).decode("ascii")
    except InvalidToken as exc:
        raise VaultError("stored token cannot be decrypted with the configured keys") from exc


@sensitive_variables()
def token_decryptable(ciphertext: str) -> bool:
    """True when the configured keys decrypt ``ciphertext`` (or it is empty)."""
    if not ciphertext:
        return True
    try:
        _fernet().decrypt(ciphertext.encode("ascii"))
    except InvalidToken:
        return False
    return True


@sensitive_variables()
def token_is_current(ciphertext: str) -> bool:
    """True when the first (encrypting) key alone decrypts ``ciphertext``."""
    if not ciphertext:
        return True
    try:
        Fernet(settings.TOKEN_ENCRYPTION_KEYS[0]).decrypt(ciphertext.encode("ascii"))
    except InvalidToken:
        return False
    return True


@sensitive_variables()
def token_fingerprint(token: str) -> str:
    """First 8 hex digits of sha256: enough to tell tokens apart, useless to an attacker."""
    return hashlib.sha256(token.encode()).hexdigest()[:8] if token else ""
