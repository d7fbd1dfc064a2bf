"""One "not before" per holder, shared by every worker: the platform asked us to wait.

A 429 or a 503 that says how long to wait (``Retry-After`` or ``X-Rate-Limit-Reset``)
sets the holder's embargo; every call for that holder checks it right before it is sent
(``transport.Transport``), from a copy this process keeps while no worker announces a new
wait (``embargo_cache``: a Redis round trip per call was ~6 % of a push's CPU). A holder
is what the platform limits: a seller for the order interface (``seller_holder``: every
push, pull, error report and settle push of that seller) and the API user for the
Authentication and Platform APIs. Calls already in flight when the answer came are the
only ones that reach the platform early.

The embargo lives in Redis when ``settings.REDIS_URL`` is set (Lua scripts with Redis's
own clock, so workers' clocks do not matter) and in the database otherwise (or while
Redis does not answer). It only ever grows: a shorter wait never cuts a longer one.

Redis keeps nothing across a restart (the broker runs without persistence), and the soak
saw what that costs: 21 calls sent inside waits the platform had asked for, right after
a Redis restart. So every embargo is also written to the database (429/503s are rare;
calls are not), and a marker key says Redis holds them: when a check finds the marker
gone, the waits still running are copied back from the database before it answers.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from marketplace.platform.embargo_cache import CACHE, channel
from marketplace.redis_client import redis_client

logger = logging.getLogger(__name__)

_SET = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if until_ms > current then
  redis.call('SET', KEYS[1], until_ms, 'PX', tonumber(ARGV[1]) + 1000)
  return tonumber(ARGV[1])
end
return current - now
"""

# KEYS[2] is the marker: absent after a restart or a wipe, and then -1 says "restore".
_REMAINING = """
if redis.call('EXISTS', KEYS[2]) == 0 then
  return -1
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current > now then
  return current - now
end
return 0
"""

_scripts_lock = threading.Lock()
_scripts: dict[str, object] = {}


def _script(source: str) -> Any:  # redis-py's Script
    with _scripts_lock:
        script = _scripts.get(source)
        if script is None:
            script = _scripts[source] = redis_client().register_script(source)
        return script


def seller_holder(seller_id: int) -> str:
    """The holder of a seller's order-interface calls."""
    return f"seller:{seller_id}"


def _key(holder: str) -> str:
    return f"embargo:{holder}"


RESTORED_KEY = "embargo-marker:restored"


def _redis_set(holder: str, wait_ms: int) -> float | None:
    """The hold now in force (seconds), or None when Redis is not used or not answering."""
    if not settings.REDIS_URL:
        return None
    try:
        return int(_script(_SET)(keys=[_key(holder)], args=[wait_ms])) / 1000
    except Exception:
        logger.warning("embargo: Redis unavailable, holding %s in the database", holder)
        return None


def _redis_remaining(holder: str) -> float | None:
    if not settings.REDIS_URL:
        return None
    try:
        remaining = int(_script(_REMAINING)(keys=[_key(holder), RESTORED_KEY]))
        if remaining < 0:
            _redis_restore()
            remaining = int(_script(_REMAINING)(keys=[_key(holder), RESTORED_KEY]))
        return max(0, remaining) / 1000
    except Exception:
        logger.warning("embargo: Redis unavailable, reading the database")
        return None


def _redis_restore() -> None:
    """Copy the waits still running from the database into Redis, then set the marker.
    Workers doing this at once are harmless: a wait only ever grows."""
    from marketplace.platform.models import HolderEmbargo

    now = timezone.now()
    restored = 0
    running = HolderEmbargo.objects.filter(not_before__gt=now).values_list("holder", "not_before")
    for holder, not_before in running.iterator(chunk_size=2000):
        wait_ms = int((not_before - now).total_seconds() * 1000) + 1
        _script(_SET)(keys=[_key(holder)], args=[wait_ms])
        restored += 1
    redis_client().set(RESTORED_KEY, "1")
    if restored:
        logger.warning("embargo: Redis had lost its waits; %s restored from the database", restored)


def embargo_set(*, holder: str, seconds: float) -> float:
    """Hold every call for ``holder`` for ``seconds`` from now (never shortens a longer
    hold). Returns how long the holder is held now."""
    if seconds <= 0:
        return embargo_remaining(holder=holder)
    # Round up to the millisecond: a wait cut short by rounding is an early retry.
    wait_ms = int(seconds * 1000) + 1
    # Redis and the announcement first: they are what every worker reads before a call,
    # so until they are written the wait is unknown to all. The database copy (what
    # survives a Redis restart) comes after: written first, from a sender thread that
    # may have to open its connection, it held back the announcement by up to half a
    # second on a loaded machine, and the other workers' calls meanwhile were early
    # retries (soak, 2026-11-28: 10, 0.48-0.67 s after a 503 that asked for 1 s).
    held = _redis_set(holder, wait_ms)
    if held is not None:
        _announce(holder)
    in_database = _db_set(holder, wait_ms / 1000)
    return held if held is not None else in_database


def _announce(holder: str) -> None:
    """Every process drops its copy of this holder's wait (``embargo_cache``): this one
    at once, the others when the message arrives."""
    CACHE.forget(holder)
    try:
        redis_client().publish(channel(), holder)
    except Exception:  # the listeners' connections broke too: they read Redis meanwhile
        logger.warning("embargo: could not announce the wait of %s", holder)


def embargo_remaining(*, holder: str) -> float:
    """Seconds until calls for ``holder`` may be sent again (0 when they may now)."""
    if settings.REDIS_URL:
        known = CACHE.remaining(holder)
        if known is not None:
            return known  # this process read it and no wait was announced since
        generation = CACHE.generation()
        remaining = _redis_remaining(holder)
        if remaining is not None:
            CACHE.keep(holder, remaining, generation)
            return remaining
    return _db_remaining(holder)


def embargo_wait(*, holder: str, max_wait: float) -> float:
    """Sleep out an embargo of at most ``max_wait`` seconds; returns what is left (0 when
    the call may go, else the embargo was longer than ``max_wait`` and nothing slept)."""
    remaining = embargo_remaining(holder=holder)
    if remaining <= 0:
        return 0.0
    if remaining > max_wait:
        return remaining
    time.sleep(remaining)
    # Another answer may have extended it meanwhile.
    return embargo_wait(holder=holder, max_wait=max(0.0, max_wait - remaining))


def _db_set(holder: str, seconds: float) -> float:
    from marketplace.platform.models import HolderEmbargo

    until = timezone.now() + timedelta(seconds=seconds)
    row, created = HolderEmbargo.objects.get_or_create(
        holder=holder[:200], defaults={"not_before": until}
    )
    if not created:
        # Only ever later: a conditional UPDATE, atomic against other workers.
        HolderEmbargo.objects.filter(pk=row.pk, not_before__lt=until).update(not_before=until)
    return _db_remaining(holder)


def _db_remaining(holder: str) -> float:
    from marketplace.platform.models import HolderEmbargo

    rows = HolderEmbargo.objects.filter(holder=holder[:200])
    not_before = rows.values_list("not_before", flat=True).first()
    if not_before is None:
        return 0.0
    return max(0.0, (not_before - timezone.now()).total_seconds())
