"""A request budget per key (e.g. per seller), shared by every worker.

The platform recommends at most 2 order listings a second per seller. Pulls of one
seller can run in several processes (a beat fan-out racing a manual pull), so the budget
lives in Redis when ``settings.REDIS_URL`` is set; without Redis (development, one
machine) a process-local limiter is the best we can do.

The algorithm is GCRA (a token bucket without a refill loop): the key stores the
"theoretical arrival time" of the next allowed request. A request may go when that time
is not in the future; it then pushes the time ``1/rate`` seconds further. Redis runs the
check-and-set atomically in a Lua script with its own clock, so workers' clocks do not
matter.

``budget_acquire`` reserves instead of polling: it takes the next free turn (pushing the
time a step further) and sleeps until it comes, so callers go in the order they asked.
Polling let a caller back for its next request win against callers that had waited
several turns: under load (EDRTS, every seller's drain waiting for the user's budget) one
seller's changes waited three times as long as another's. A reserved turn of a caller
that dies is lost: one interval.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings

from marketplace.redis_client import redis_client

logger = logging.getLogger(__name__)

_GCRA = """
local interval = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat > now then
  return tat - now
end
redis.call('SET', KEYS[1], now + interval, 'PX', interval * 2 + 1000)
return 0
"""

_RESERVE = """
local interval = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local turn = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
redis.call('SET', KEYS[1], turn + interval, 'PX', turn - now + interval * 2 + 1000)
return turn - now
"""


class _LocalBudget:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next_at: dict[str, float] = {}

    def try_take(self, key: str, interval: float) -> float:
        with self._lock:
            now = time.monotonic()
            next_at = self._next_at.get(key, 0.0)
            if next_at > now:
                return next_at - now
            self._next_at[key] = now + interval
            return 0.0

    def reserve(self, key: str, interval: float) -> float:
        with self._lock:
            now = time.monotonic()
            turn = max(self._next_at.get(key, 0.0), now)
            self._next_at[key] = turn + interval
            return turn - now


_local = _LocalBudget()
_redis_lock = threading.Lock()
_redis_scripts: dict[str, Any] = {}


def _redis_run(source: str, key: str, interval: float) -> float:
    with _redis_lock:
        script = _redis_scripts.get(source)
        if script is None:
            script = _redis_scripts[source] = redis_client().register_script(source)
    wait_ms = int(script(keys=[f"rate-budget:{key}"], args=[max(1, int(interval * 1000))]))
    return wait_ms / 1000


def budget_try_take(*, key: str, rate_per_second: float) -> float:
    """Take one request from the budget if one is free; returns 0, or seconds to wait."""
    interval = 1.0 / rate_per_second
    if settings.REDIS_URL:
        try:
            return _redis_run(_GCRA, key, interval)
        except Exception:  # Redis down: fall back rather than stop pulling altogether
            logger.warning("rate budget: Redis unavailable, using a process-local budget")
    return _local.try_take(key, interval)


def budget_acquire(*, key: str, rate_per_second: float) -> float:
    """Take the budget's next free turn and sleep until it comes; returns the seconds
    waited. Callers of one key go in the order they asked (see the module docstring)."""
    interval = 1.0 / rate_per_second
    wait = None
    if settings.REDIS_URL:
        try:
            wait = _redis_run(_RESERVE, key, interval)
        except Exception:  # Redis down: fall back rather than stop pulling altogether
            logger.warning("rate budget: Redis unavailable, using a process-local budget")
    if wait is None:
        wait = _local.reserve(key, interval)
    if wait > 0:
        time.sleep(wait)
    return wait
