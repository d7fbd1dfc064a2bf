"""The outbox's one backoff formula and the platform's wait after a 429."""

from __future__ import annotations

from typing import Any

from marketplace.outbox.backoff import backoff_seconds, embargo_wait_seconds


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    low = [backoff_seconds(n, base=2, cap=100, rand=lambda: 0.0) for n in range(1, 8)]
    high = [backoff_seconds(n, base=2, cap=100, rand=lambda: 1.0) for n in range(1, 8)]
    assert low == [1, 2, 4, 8, 16, 32, 50]
    assert high == [2, 4, 8, 16, 32, 64, 100]
    for n in range(1, 8):
        assert low[n - 1] <= backoff_seconds(n, base=2, cap=100) <= high[n - 1]


def test_embargo_wait_uses_the_platforms_word_or_the_default(settings: Any) -> None:
    settings.PUSH_RATE_LIMIT_DEFAULT_WAIT = 30
    assert embargo_wait_seconds(4) == 4
    assert embargo_wait_seconds(0) == 1
    assert embargo_wait_seconds(None) == 30
    assert embargo_wait_seconds(0.2, floor=0.05) == 0.2  # EDRTS: X-Rate-Limit-Reset may be < 1 s
