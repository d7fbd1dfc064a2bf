"""The app's own Redis connection (the rate budget, the push doorbell), one per process.

Celery's broker connection is Celery's; this one is for the small keys the app keeps
itself. Short timeouts: every caller falls back to something safe when Redis is away.
"""

from __future__ import annotations

import threading

import redis
from django.conf import settings

_lock = threading.Lock()
_client: redis.Redis | None = None


def redis_client() -> redis.Redis:
    """The process's client for ``settings.REDIS_URL`` (created on first use, after a fork)."""
    global _client
    with _lock:
        if _client is None:
            _client = redis.Redis.from_url(
                settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2
            )
        return _client
