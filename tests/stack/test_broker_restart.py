"""A worker outlives a Redis restart with tasks in flight, and runs tasks afterwards.

Celery 5.7.0's stock consumer died at the first such restart ("Unrecoverable error:
AttributeError: 'NoneType' object has no attribute 'hostname'"; see
``marketplace.broker_consumer``). A real worker, a real redis-server of the test's own (a
``SHUTDOWN`` of the shared one would wipe every other test's data), three restarts each
while four messages are unacknowledged (two tasks running, two held for their countdown)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.harness import PrivateRedis

ROOT = Path(__file__).resolve().parents[2]
RESTARTS = 3

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None and os.environ.get("REQUIRE_SERVICES") != "1",
    reason="needs redis-server on PATH",
)


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _worker(url: str, log: Path, consumer: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BROKER_RESTART_URL": url, "BROKER_RESTART_CONSUMER": consumer}
    with open(log, "wb") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "tests.stack.broker_restart_app",
                "worker",
                "--loglevel",
                "INFO",
                "--concurrency",
                "2",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_for(
    log: Path, words: tuple[str, ...], count: int, worker: subprocess.Popen[bytes]
) -> None:
    """Until ``count`` lines of the worker's log hold every one of ``words``."""
    deadline = time.monotonic() + 60
    while True:
        text = log.read_text(errors="replace")
        if sum(all(word in line for word in words) for line in text.splitlines()) >= count:
            return
        assert worker.poll() is None, f"the worker exited:\n{text[-4000:]}"
        assert time.monotonic() < deadline, f"no {words} #{count}:\n{text[-4000:]}"
        time.sleep(0.1)


def test_the_worker_survives_redis_restarts_with_tasks_in_flight(
    redis: PrivateRedis, tmp_path: Path
) -> None:
    from tests.stack.broker_restart_app import app, mark, slow

    log = tmp_path / "worker.log"
    app.conf.broker_url = redis.url
    worker = _worker(redis.url, log, "marketplace.broker_consumer:ReconnectingConsumer")
    try:
        _wait_for(log, (" ready.",), 1, worker)
        for restart in range(1, RESTARTS + 1):
            # Given two slow tasks running and two waiting for their countdown, so four
            # messages are delivered and unacknowledged
            slow.delay(5.0)
            slow.delay(5.0)
            slow.apply_async((0.1,), countdown=30)
            slow.apply_async((0.1,), countdown=30)
            _wait_for(log, ("broker_restart_app.slow[", "] received"), 4 * restart, worker)
            # When Redis goes away and comes back (every queued message gone)
            redis.restart()
            # Then the worker reconnects instead of dying
            _wait_for(log, ("Connected to redis://",), restart + 1, worker)
        # And it still runs what is sent after the last restart
        marker = tmp_path / "mark"
        mark.delay(str(marker))
        _wait_for(log, ("broker_restart_app.mark[", "] succeeded"), 1, worker)
        assert marker.read_text() == "ran"
        assert "Unrecoverable error" not in log.read_text()
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, 9)
            worker.wait()
