"""EDRTS's in-memory settings, fault switches and counters (one server process; cleared by
reset, like the rest of the sandbox's switches).

* ``delay_seconds``: a batch is processed no sooner than this after it was received
  (``SANDBOX_EDRTS_DELAY_SECONDS``, default 0.5 s).
* ``batch_records``: a request is split into batches of at most this many records
  (``SANDBOX_EDRTS_BATCH_RECORDS``, default 100).
* ``fail_next`` / ``lose_next``: the next N batches the worker takes fail (nothing applied,
  status ``failed``, every record in ``errors``) or are lost (nothing applied, the job
  endpoint answers 404: what reconciliation must repair).
* ``unavailable_next``: the next N authenticated EDRTS calls answer 503 (after the rate
  limit counted them; nothing queued), for a client's retries.
"""

import os
import threading
from dataclasses import asdict, dataclass

from sandbox.edrts import waits


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    return float(raw) if raw else default


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    return int(raw) if raw else default


@dataclass
class Settings:
    delay_seconds: float
    batch_records: int
    fail_next: int = 0
    lose_next: int = 0
    unavailable_next: int = 0


def _initial() -> Settings:
    return Settings(
        delay_seconds=_env_float("SANDBOX_EDRTS_DELAY_SECONDS", 0.5),
        batch_records=_env_int("SANDBOX_EDRTS_BATCH_RECORDS", 100),
    )


_lock = threading.Lock()
current = _initial()
COUNTER_NAMES = (
    "requests",
    "accepted",
    "refused",
    "rate_limited",
    "unavailable",
    "records_received",
    "records_over_5kb",
    "bytes_received",
)
_counters: dict[str, int] = dict.fromkeys(COUNTER_NAMES, 0)


def settings_set(changes: dict) -> Settings:
    """Change some settings (the caller checked the values)."""
    with _lock:
        for key, value in changes.items():
            setattr(current, key, value)
        return Settings(**asdict(current))


def settings_snapshot() -> dict:
    with _lock:
        return asdict(current)


def take_fault() -> str | None:
    """For the worker: ``"fail"``/``"lose"`` when a fault switch claims this batch."""
    with _lock:
        if current.fail_next > 0:
            current.fail_next -= 1
            return "fail"
        if current.lose_next > 0:
            current.lose_next -= 1
            return "lose"
        return None


def take_unavailable() -> bool:
    """For the endpoint: whether this call answers 503 (``unavailable_next``)."""
    with _lock:
        if current.unavailable_next > 0:
            current.unavailable_next -= 1
            return True
        return False


def count(**amounts: int) -> None:
    with _lock:
        for name, amount in amounts.items():
            _counters[name] += amount


def counters() -> dict[str, int]:
    with _lock:
        return dict(_counters)


def reset() -> None:
    global current
    with _lock:
        current = _initial()
        for name in _counters:
            _counters[name] = 0
    waits.reset()
