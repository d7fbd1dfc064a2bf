"""The simulated seller starts beside the sandbox (``make run``): it waits for the
sandbox's ``/health`` silently, says so once if it is still not up after a while, and
gives up after a bounded wait (the supervisor then restarts it)."""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from sandbox.seller_sim.__main__ import sandbox_wait
from tests.support.sandbox_process import free_port


class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_sandbox_that_comes_up_is_waited_for_without_a_word(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_port()
    server = HTTPServer(("127.0.0.1", port), _Health)
    # The sandbox answers 1 s after the seller starts waiting.
    timer = threading.Timer(1.0, server.serve_forever)
    timer.start()
    up = False
    try:
        with caplog.at_level(logging.INFO):
            up = sandbox_wait(f"http://127.0.0.1:{port}", threading.Event(), seconds=10)
    finally:
        timer.cancel()
        if up:
            server.shutdown()
        server.server_close()
    assert up
    assert caplog.records == []


def test_a_sandbox_that_stays_down_is_reported_once_and_the_wait_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens
    with caplog.at_level(logging.INFO):
        up = sandbox_wait(url, threading.Event(), seconds=1.5, quiet=0.5)
    assert not up
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1, messages
    assert messages[0].startswith(f"the sandbox at {url} is not up after")


def test_a_stop_ends_the_wait_at_once() -> None:
    stop = threading.Event()
    stop.set()
    assert not sandbox_wait(f"http://127.0.0.1:{free_port()}", stop, seconds=30)
