"""Checks on configuration values that settings.py runs at start.

A bad value stops the process with a message naming the variable; the value itself is
never echoed (it is a secret, or holds one, e.g. a password in EMAIL_URL).
"""

from __future__ import annotations

from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
KEY_HINT = (
    'generate one with: python -c "from cryptography.fernet import Fernet; '
    'print(Fernet.generate_key().decode())"'
)


def fernet_keys(raw: str, *, name: str) -> list[str]:
    """The comma-separated Fernet keys in ``raw``, each checked; the first encrypts."""
    keys = [part.strip() for part in raw.split(",")]
    if not any(keys):
        raise ImproperlyConfigured(f"{name} holds no key; {KEY_HINT}")
    for position, key in enumerate(keys, 1):
        if not key:
            # "a,,b" or a trailing comma: likely a key lost in editing, so say so.
            raise ImproperlyConfigured(f"{name}: entry {position} of {len(keys)} is empty")
        try:
            Fernet(key)
        except (ValueError, TypeError):
            raise ImproperlyConfigured(
                f"{name}: entry {position} of {len(keys)} is not a Fernet key "
                f"(32 url-safe base64-encoded bytes); {KEY_HINT}"
            ) from None
    return keys


def production_email(*, raw_url: str, backend: str, name: str) -> None:
    """Production sends real mail: seller notices (re-authorize, expiring grants) matter."""
    if backend != SMTP_BACKEND:
        scheme = raw_url.partition(":")[0] or "(empty)"
        raise ImproperlyConfigured(
            f"{name} must be an SMTP URL in production (smtp://, smtps:// or smtp+tls://), "
            f"not {scheme}://"
        )
