"""The one way the sandbox runs something in the background: a daemon thread per name
(started once per server process) that calls ``tick`` forever, logs what it raises and
closes the thread's old database connections after each call."""

import logging
import threading
import time
from collections.abc import Callable

from django.db import close_old_connections

log = logging.getLogger(__name__)

_threads: dict[str, threading.Thread] = {}
_lock = threading.Lock()


def _run(name: str, tick: Callable[[], object], pause_seconds: float, again_if_busy: bool) -> None:
    while True:
        busy: object = False
        try:
            busy = tick()
        except Exception:
            log.exception("%s: tick failed", name)
        finally:
            close_old_connections()
        if not (again_if_busy and busy):
            time.sleep(pause_seconds)


def loop_start(
    name: str,
    tick: Callable[[], object],
    *,
    pause_seconds: float,
    again_if_busy: bool = False,
) -> None:
    """Start ``name``'s loop unless it runs. It pauses ``pause_seconds`` after each tick,
    except, with ``again_if_busy``, after one that returned something true (it did work)."""
    with _lock:
        if name in _threads:
            return
        thread = threading.Thread(
            target=_run, args=(name, tick, pause_seconds, again_if_busy), name=name, daemon=True
        )
        _threads[name] = thread
        thread.start()
