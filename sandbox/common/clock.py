"""The sandbox clock: real time plus a shift set through the control API.

Kept in process (one gunicorn worker), shared by all its threads. Token, code and
refresh-token expiry and every timestamp the sandbox writes use it.
"""

import threading
from datetime import datetime, timedelta

from django.utils import timezone

_lock = threading.Lock()
_offset_seconds = 0.0


def now() -> datetime:
    return timezone.now() + timedelta(seconds=_offset_seconds)


def offset_seconds() -> float:
    return _offset_seconds


def shift(seconds: float) -> float:
    global _offset_seconds
    with _lock:
        _offset_seconds += seconds
        return _offset_seconds


def reset() -> None:
    global _offset_seconds
    with _lock:
        _offset_seconds = 0.0
