"""Running work items in threads, as the bare baselines do (one keep-alive session each)."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import requests

_local = threading.local()


def thread_session() -> requests.Session:
    """This thread's keep-alive session."""
    session = getattr(_local, "session", None)
    if session is None:
        session = _local.session = requests.Session()
    return session


def threads_run(
    work: Iterable[Any],
    concurrency: int,
    call: Callable[[Any], None],
    *,
    what: str,
    nice: int = 0,
) -> float:
    """``call(item)`` for every item from ``concurrency`` threads; returns the seconds it
    took. Raises if any call raised, naming ``what`` failed. ``nice``: each thread runs at
    this niceness (Linux keeps a niceness per thread), the rest of the process does not."""
    items: queue.Queue[Any] = queue.Queue()
    for item in work:
        items.put(item)
    errors: list[str] = []

    def run() -> None:
        from django.db import connection

        if nice:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
        try:
            while True:
                try:
                    item = items.get_nowait()
                except queue.Empty:
                    return
                try:
                    call(item)
                except Exception as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            connection.close()  # a call that used the ORM opened one in this thread

    threads = [threading.Thread(target=run) for _ in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} {what} failed: {errors[:3]}")
    return elapsed


def orders_put(
    api_url: str,
    jobs: Iterable[tuple[str, str, dict[str, Any]]],
    concurrency: int,
    *,
    what: str = "PUTs",
    read_timeout: float = 20,
    nice: int = 0,
) -> float:
    """PUT every (token, number, payload) from ``concurrency`` keep-alive sessions."""

    def put(job: tuple[str, str, dict[str, Any]]) -> None:
        token, number, payload = job
        response = thread_session().put(
            f"{api_url}/orders/{number}",
            json=payload,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=(5, read_timeout),
        )
        if response.status_code not in (200, 201):
            raise RuntimeError(f"{number}: {response.status_code} {response.text[:200]}")

    return threads_run(jobs, concurrency, put, what=what, nice=nice)
