"""Process-wide behaviour switches set through the control API (not persisted).

Each has a start value (the ``serve`` flag, passed on as an environment variable) that
reset restores.
"""

import os
import threading
from dataclasses import dataclass

# Requests a client had already sent when a 429/503 left may land just after it: this
# long after sending, they are not counted as early retries. Arrival is taken in the
# middleware, after gunicorn's thread picked the request up: on two loaded cores a call a
# sender thread had started before its sibling's 503 came back was seen 56 ms, and once
# 166 ms, after it (soak smoke with the machine loaded). 0.4 s keeps those out; the retry
# itself and a request on the same connection get no grace at all (retry_watch), and a
# client that keeps calling through a 1 s wait is still caught.
DEFAULT_RETRY_GRACE_SECONDS = 0.4


def _initial_auto_ship() -> float | None:
    raw = os.environ.get("SANDBOX_AUTO_SHIP_SECONDS", "")
    return float(raw) if raw else None


def _initial_additive_fields() -> bool:
    return os.environ.get("SANDBOX_ADDITIVE_FIELDS", "") == "1"


def _initial_retry_grace() -> float:
    raw = os.environ.get("SANDBOX_RETRY_GRACE_SECONDS", "")
    return float(raw) if raw else DEFAULT_RETRY_GRACE_SECONDS


@dataclass
class Switches:
    rotation_enabled: bool = True
    auto_ship_seconds: float | None = None
    # Off: answers carry only the contract's fields. On: unknown fields everywhere.
    additive_fields: bool = False
    retry_grace_seconds: float = DEFAULT_RETRY_GRACE_SECONDS


_lock = threading.Lock()
current = Switches(
    auto_ship_seconds=_initial_auto_ship(),
    additive_fields=_initial_additive_fields(),
    retry_grace_seconds=_initial_retry_grace(),
)


def set_rotation(*, enabled: bool) -> None:
    with _lock:
        current.rotation_enabled = enabled


def set_auto_ship(*, seconds: float | None) -> None:
    with _lock:
        current.auto_ship_seconds = seconds


def set_additive_fields(*, enabled: bool) -> None:
    with _lock:
        current.additive_fields = enabled


def set_retry_grace(*, seconds: float) -> None:
    with _lock:
        current.retry_grace_seconds = seconds


def reset() -> None:
    with _lock:
        current.rotation_enabled = True
        current.auto_ship_seconds = _initial_auto_ship()
        current.additive_fields = _initial_additive_fields()
        current.retry_grace_seconds = _initial_retry_grace()


def snapshot() -> dict:
    return {
        "rotation_enabled": current.rotation_enabled,
        "auto_ship_seconds": current.auto_ship_seconds,
        "additive_fields": current.additive_fields,
        "retry_grace_seconds": current.retry_grace_seconds,
    }
