"""The token vault: Fernet encryption of stored tokens with rotatable keys.

``settings.TOKEN_ENCRYPTION_KEYS`` is a list of Fernet keys; the first encrypts, all
decrypt (``MultiFernet``). To rotate: put a new key first, run
``manage.py rotate_token_keys`` (re-encrypts every token with it), then drop the old key.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.views.decorators.debug import sensitive_variables

from sellers.errors import VaultError


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
