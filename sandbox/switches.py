"""Process-wide behaviour switches set through the control API (not persisted)."""

import os
import threading
from dataclasses import dataclass


@dataclass
class Switches:
    rotation_enabled: bool = True
    auto_ship_seconds: float | None = None


_lock = threading.Lock()
current = Switches()


def _initial_auto_ship() -> float | None:
    raw = os.environ.get("SANDBOX_AUTO_SHIP_SECONDS", "")
    return float(raw) if raw else None


current.auto_ship_seconds = _initial_auto_ship()


def set_rotation(*, enabled: bool) -> None:
    with _lock:
        current.rotation_enabled = enabled


def set_auto_ship(*, seconds: float | None) -> None:
    with _lock:
        current.auto_ship_seconds = seconds


def reset() -> None:
    with _lock:
        current.rotation_enabled = True
        current.auto_ship_seconds = _initial_auto_ship()


def snapshot() -> dict:
    return {
        "rotation_enabled": current.rotation_enabled,
        "auto_ship_seconds": current.auto_ship_seconds,
    }
