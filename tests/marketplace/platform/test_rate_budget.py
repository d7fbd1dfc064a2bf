"""marketplace.platform.rate_budget: one request budget per key, shared by every worker."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

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


@pytest.mark.parametrize("redis", [True, False], ids=["redis", "process-local"])
def test_a_waiting_caller_holds_its_turn(settings: Any, redis: bool) -> None:
    # Given the budget (2/s) just taken, and a caller waiting for the next turn
    if not redis:
        settings.REDIS_URL = ""
    key = f"test-turns-{time.time_ns()}"
    taken = time.monotonic()
    assert budget_acquire(key=key, rate_per_second=2) == 0
    waited: list[float] = []
    waiting = threading.Thread(
        target=lambda: waited.append(budget_acquire(key=key, rate_per_second=2))
    )
    waiting.start()
    time.sleep(0.2)

    # When another asks while it sleeps
    asked = time.monotonic()
    newcomer = budget_try_take(key=key, rate_per_second=2)
    waiting.join()

    # Then the waiting caller's turn (0.5 s after the first) is its own: the newcomer's
    # comes a step after it (1 s after the first; a poll would have said 0.5 s), and the
    # waiting caller slept until its turn
    assert abs(asked + newcomer - (taken + 1.0)) < 0.15
    assert 0 < waited[0] <= 0.5


@pytest.mark.parametrize("redis", [True, False], ids=["redis", "process-local"])
def test_callers_go_in_the_order_they_asked(settings: Any, redis: bool) -> None:
    if not redis:
        settings.REDIS_URL = ""
    key = f"test-order-{time.time_ns()}"
    turns: dict[int, float] = {}

    def caller(number: int) -> None:
        asked = time.monotonic()
        turns[number] = asked + budget_acquire(key=key, rate_per_second=5)

    callers = [threading.Thread(target=caller, args=(n,)) for n in range(6)]
    for thread in callers:
        thread.start()
        time.sleep(0.1)  # each asks after the one before, inside a turn of 0.2 s
    for thread in callers:
        thread.join()

    # Each went at its own turn, in the order asked, a turn (0.2 s) after the one before
    went = sorted(turns, key=turns.__getitem__)
    assert went == list(range(6))
    assert all(turns[n + 1] - turns[n] > 0.15 for n in range(5))
