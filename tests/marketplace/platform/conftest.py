"""A tiny real HTTP server standing in for the platform where the sandbox cannot answer
as a broken platform would (a PHP notice before the JSON, a token endpoint at another
base). It runs in a thread of the test process; requests reach it over a socket."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from marketplace.platform import transport


@dataclass
class Answer:
    status: int
    body: str
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    delay: float = 0.0  # seconds before answering (a slow platform)


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: str


class TinyPlatform:
    """Answers each ``(method, path)`` with its scripted answers in turn (the last one
    repeats) and 404 otherwise; remembers every request."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], list[Answer]] = {}
        self.received: list[Received] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                path = self.path.split("?", 1)[0]
                answer = owner._next(self.command, path, self.headers, body)
                if answer.delay:
                    time.sleep(answer.delay)
                payload = answer.body.encode()
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the test reads what it needs from ``received``

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def answer(self, method: str, path: str, *answers: Answer) -> None:
        with self._lock:
            self.answers[(method, path)] = list(answers)

    def requests_to(self, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path == path]

    def _next(self, method: str, path: str, headers: Any, body: str) -> Answer:
        with self._lock:
            self.received.append(Received(method, path, dict(headers.items()), body))
            queue = self.answers.get((method, path))
            if not queue:
                return Answer(404, '{"message": "no such path on the tiny platform"}')
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        # Keep-alive sessions of this thread would point at a closed port.
        sessions = getattr(transport._thread, "sessions", {})
        sessions.pop(self.url, None)


@pytest.fixture
def tiny_platform() -> Iterator[TinyPlatform]:
    server = TinyPlatform()
    yield server
    server.close()


@pytest.fixture
def other_tiny_platform() -> Iterator[TinyPlatform]:
    server = TinyPlatform()
    yield server
    server.close()


def embargo_clear() -> None:
    """Forget every wait the platform asked for (Redis and the database)."""
    from django.conf import settings

    from marketplace.platform.models import HolderEmbargo

    HolderEmbargo.objects.all().delete()
    if settings.REDIS_URL:
        from marketplace.redis_client import redis_client

        for key in redis_client().scan_iter("embargo:*"):
            redis_client().delete(key)
    # And this process's copy of what it read (embargo_cache): a real wait ends by time.
    from marketplace.platform.embargo_cache import CACHE

    CACHE.forget()


@pytest.fixture
def no_embargo(db: Any) -> None:
    """No wait left over in Redis from an earlier test (the database copy rolls back)."""
    embargo_clear()
