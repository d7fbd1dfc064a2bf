"""When to try a push again.

Transient failures (5xx, timeouts, connection errors, unreadable answers) back off
exponentially with "equal jitter": half the delay is fixed, half random, so a burst of
failed pushes does not come back as a burst, yet every retry waits at least half the
nominal delay. 429s wait as long as the platform says (``Retry-After`` /
``X-Rate-Limit-Reset``), and do not count towards the dead letter.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from django.conf import settings


def push_backoff_seconds(
    failures: int,
    *,
    base: float | None = None,
    cap: float | None = None,
    rand: Callable[[], float] = random.random,
) -> float:
    """Delay before retry number ``failures`` (1 = after the first failure)."""
    base = settings.PUSH_BACKOFF_BASE if base is None else base
    cap = settings.PUSH_BACKOFF_CAP if cap is None else cap
    nominal = min(cap, base * 2 ** max(0, failures - 1))
    return nominal / 2 + rand() * nominal / 2


def rate_limited_wait_seconds(retry_after: float | None) -> float:
    """How long to wait after a 429: the platform's word, else the default, never below 1 s."""
    if retry_after is None:
        return float(settings.PUSH_RATE_LIMIT_DEFAULT_WAIT)
    return max(1.0, float(retry_after))
