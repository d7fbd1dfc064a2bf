"""Behaviour of the simulated seller process, per seller, set through the control API.

The sandbox only keeps these (in memory; reset clears them): the simulator process
(``python -m sandbox.seller_sim``) reads them every few seconds and lets them override its
command line, so a test or a person can change a running simulator's behaviour.
"""

import threading
import time

# name -> (type, minimum, maximum)
FIELDS: dict[str, tuple[type, float, float]] = {
    "ship_delay_seconds": (float, 0, 86400),
    "packages": (int, 1, 20),
    "cancel_rate": (float, 0, 1),
    "bad_rate": (float, 0, 1),
    "paused": (bool, 0, 1),
    "handle_returns": (bool, 0, 1),
    "return_reject_rate": (float, 0, 1),
    "return_arrival_seconds": (float, 0, 86400),
    "seller_refund_rate": (float, 0, 1),
    "over_refund_rate": (float, 0, 1),
    "seller_refund_delay_seconds": (float, 0, 86400),
    "paused_refund_fix_rate": (float, 0, 1),
    "paused_refund_fix_seconds": (float, 0, 86400),
}

_lock = threading.Lock()
_by_seller: dict[str, dict[str, object]] = {}
# When the simulator process last read each seller's settings (monotonic seconds).
_read_at: dict[str, float] = {}


class SimSettingsError(ValueError):
    pass


def settings_get(seller: str) -> dict[str, object]:
    with _lock:
        return dict(_by_seller.get(seller, {}))


def settings_read(seller: str) -> dict[str, object]:
    """``settings_get`` for the simulator process itself: remembers when it asked (the v2
    seller page shows it, so a person sees whether a simulator is running at all)."""
    with _lock:
        _read_at[seller] = time.monotonic()
        return dict(_by_seller.get(seller, {}))


def seconds_since_read(seller: str) -> float | None:
    with _lock:
        at = _read_at.get(seller)
    return None if at is None else max(0.0, time.monotonic() - at)


def settings_update(seller: str, changes: dict[str, object]) -> dict[str, object]:
    """Merge ``changes`` (null removes an override) into the seller's settings."""
    checked: dict[str, object] = {}
    for key, value in changes.items():
        if key not in FIELDS:
            raise SimSettingsError(f"unknown setting {key!r} (known: {', '.join(FIELDS)})")
        kind, low, high = FIELDS[key]
        if value is None:
            checked[key] = None
            continue
        if kind is bool:
            if not isinstance(value, bool):
                raise SimSettingsError(f"{key} must be true or false")
        elif (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            raise SimSettingsError(f"{key} must be a number from {low} to {high}")
        elif kind is int and value != int(value):
            raise SimSettingsError(f"{key} must be an integer")
        checked[key] = kind(value)
    with _lock:
        current = _by_seller.setdefault(seller, {})
        for key, value in checked.items():
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value
        return dict(current)


def reset() -> None:
    with _lock:
        _by_seller.clear()
        _read_at.clear()
