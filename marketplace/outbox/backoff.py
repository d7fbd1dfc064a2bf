"""When to try again: the one backoff formula of every outbox kind.

Transient failures (5xx, timeouts, connection errors, unreadable answers) back off
exponentially with "equal jitter": half the delay is fixed, half random, so a burst of
failures does not come back as a burst, yet every retry waits at least half the nominal
delay; capped. A 429 waits as long as the platform says (``Retry-After`` /
``X-Rate-Limit-Reset``: the embargo) and does not count towards the dead letter.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from django.conf import settings


def backoff_seconds(
    failures: int,
    *,
    base: float,
    cap: float,
    rand: Callable[[], float] = random.random,
) -> float:
    """Delay before retry number ``failures`` (1 = after the first failure)."""
    nominal = min(cap, base * 2.0 ** max(0, failures - 1))
    return nominal / 2 + rand() * nominal / 2


def embargo_wait_seconds(retry_after: float | None, *, floor: float = 1.0) -> float:
    """How long to wait after a 429: the platform's word, else the default, never below
    ``floor`` (1 s: a Retry-After is whole seconds; an X-Rate-Limit-Reset may be less)."""
    if retry_after is None:
        return float(settings.PUSH_RATE_LIMIT_DEFAULT_WAIT)
    return max(floor, float(retry_after))
