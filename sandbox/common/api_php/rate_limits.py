"""Rate limits per group, counted per API token (per client address for ``login``).

Fixed windows (our choice): the first call opens a window of ``window_seconds``; up to
``limit`` calls fit in it. Every answer says ``X-Rate-Limit-Group``, ``-Remaining`` and
``-Reset`` (the window's end, Unix seconds rounded up). Over the limit: 429 with the
contract's message and ``Retry-After``. Limits per group are set through the control API
(``/sandbox/api/rate-limits``); reset restores the defaults. In memory, like the faults.
"""

import math
import os
import threading
import time
from dataclasses import dataclass

DEFAULT_LIMITS: dict[str, tuple[int, float]] = {
    "login": (60, 60.0),
    "accounts": (300, 60.0),
    "exports": (300, 60.0),
    "imports": (300, 60.0),
    # The Event-Driven Sync API (sandbox/edrts), per API user: the published guidance for
    # batches of 25-50 records; ``SANDBOX_EDRTS_RATE_LIMIT`` changes the default.
    "edrts": (int(os.environ.get("SANDBOX_EDRTS_RATE_LIMIT", "") or 300), 60.0),
    # The Content API (sandbox/content_api), per API token.
    "content": (300, 60.0),
}


@dataclass
class Limit:
    limit: int
    window_seconds: float


@dataclass(frozen=True)
class Decision:
    allowed: bool
    group: str
    remaining: int
    reset_at: int  # Unix seconds
    wait_seconds: int

    def headers(self) -> dict[str, str]:
        return {
            "X-Rate-Limit-Group": self.group,
            "X-Rate-Limit-Remaining": str(self.remaining),
            "X-Rate-Limit-Reset": str(self.reset_at),
        }


_lock = threading.Lock()
_limits: dict[str, Limit] = {}
_windows: dict[tuple[str, str], tuple[float, int]] = {}


def _defaults() -> dict[str, Limit]:
    return {group: Limit(n, seconds) for group, (n, seconds) in DEFAULT_LIMITS.items()}


def reset() -> None:
    with _lock:
        _limits.clear()
        _limits.update(_defaults())
        _windows.clear()


reset()


def configure(*, group: str, limit: int, window_seconds: float) -> None:
    """Set a group's limit; its open windows close (the next call starts afresh)."""
    with _lock:
        _limits[group] = Limit(limit, window_seconds)
        for key in [k for k in _windows if k[0] == group]:
            del _windows[key]


def snapshot() -> dict[str, dict]:
    with _lock:
        return {
            group: {"limit": lim.limit, "window_seconds": lim.window_seconds}
            for group, lim in _limits.items()
        }


def take(group: str, subject: str) -> Decision:
    """Count one call of ``subject`` in ``group`` (a refused call is not counted)."""
    now = time.time()
    with _lock:
        lim = _limits[group]
        started, used = _windows.get((group, subject), (now, 0))
        if now >= started + lim.window_seconds:
            started, used = now, 0
        reset_at = math.ceil(started + lim.window_seconds)
        if used >= lim.limit:
            wait = max(1, math.ceil(started + lim.window_seconds - now))
            return Decision(False, group, 0, reset_at, wait)
        used += 1
        _windows[(group, subject)] = (started, used)
        return Decision(True, group, lim.limit - used, reset_at, 0)
