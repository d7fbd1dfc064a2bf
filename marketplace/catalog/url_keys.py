"""The random keys that name catalog URLs (a feed's receiving folder, a seller's
listing-status file), and the URL converter that matches exactly what is generated.

Anything else in a key's place answers 404 before any query: a ``%00`` once reached
Postgres ("A string literal cannot contain NUL") and answered 500 with a traceback.
"""

from __future__ import annotations

import secrets

from django.urls import register_converter

KEY_BYTES = 18
KEY_LENGTH = 24  # token_urlsafe: 4 characters per 3 bytes, no padding
KEY_REGEX = rf"[A-Za-z0-9_-]{{{KEY_LENGTH}}}"


def url_key_new() -> str:
    key = secrets.token_urlsafe(KEY_BYTES)
    assert len(key) == KEY_LENGTH
    return key


class UrlKeyConverter:
    regex = KEY_REGEX

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(UrlKeyConverter, "catalog_key")
