"""marketplace.platform.rate_budget: one request budget per key, shared by every worker."""

from __future__ import annotations

import time
from typing import Any

from marketplace.platform.rate_budget import budget_acquire, budget_try_take


def test_rate_budget_spaces_requests_of_one_key_but_not_of_others(settings: Any) -> None:
    key = f"test-{time.time_ns()}"
    assert budget_try_take(key=key, rate_per_second=2) == 0
    wait = budget_try_take(key=key, rate_per_second=2)
    assert 0.3 < wait <= 0.5
    assert budget_try_take(key=key + "-other", rate_per_second=2) == 0
    started = time.monotonic()
    budget_acquire(key=key, rate_per_second=2)
    budget_acquire(key=key, rate_per_second=2)
    # Three takes at 2/s: at least ~1 s after the first.
    assert time.monotonic() - started >= 0.8
