"""Intake API keys: shown once at creation, stored only as a SHA-256 hash.

A key is 256 random bits, so an unsalted fast hash is enough (nothing to brute-force);
the lookup is by the hash's unique index.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.utils import timezone

from marketplace.orders.models import ApiKey

KEY_PREFIX = "mpk_"
# Do not write last_used_at on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def api_key_hash(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


def api_key_create(*, name: str) -> tuple[ApiKey, str]:
    """Create a key; returns the row and the raw key, which is never stored."""
    raw_key = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey.objects.create(name=name, prefix=raw_key[:12], key_hash=api_key_hash(raw_key))
    return key, raw_key


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    if not raw_key:
        return None
    key = ApiKey.objects.filter(key_hash=api_key_hash(raw_key), revoked_at__isnull=True).first()
    if key is None:
        return None
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return key


def api_key_revoke(*, name: str) -> bool:
    return bool(
        ApiKey.objects.filter(name=name, revoked_at__isnull=True).update(revoked_at=timezone.now())
    )
