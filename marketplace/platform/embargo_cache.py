"""This process's copy of the embargoes it has read, kept exact by a Redis channel.

Every platform call checks its holder's embargo right before it is sent; asking Redis
each time was ~6 % of a push's CPU (a script call per PUT, P1 profile) for an answer that
is "no wait" all but a few times a day. So a process keeps what it read, per holder, as a
deadline on its own monotonic clock, and drops it when any worker announces a new wait:
``embargo_set`` publishes the holder on ``channel()`` after writing Redis, and a
listener thread per process forgets that holder when the message arrives.

Exactness: a call can start on a stale copy only between another worker's write and the
message reaching this process (a local round trip, well under a millisecond on an idle
machine): the same window as a call already in flight when the 429 came, which the
platform cannot tell apart. A read that raced an announcement is not kept (the
generation counter). The copy is used only while the listener is subscribed: before it
is, after its connection breaks (a Redis restart closes it; a silent one is found by the
PINGs within twice ``HEALTH_CHECK_SECONDS``) and in a process without Redis, every call
reads the store as before. Losing the connection forgets everything.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from urllib.parse import urlsplit

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

HEALTH_CHECK_SECONDS = 2.0
RECONNECT_SECONDS = 1.0


def channel() -> str:
    """The announcements' channel (channels span Redis databases: name ours)."""
    database = urlsplit(settings.REDIS_URL).path.lstrip("/") or "0"
    return f"embargo-announce:{database}"


class EmbargoCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: tuple[int, str] | None = None  # (pid, Redis URL) of the listener
        self._listener = 0  # the current listener's number; older ones stop
        self._live = False
        self._generation = 0
        self._deadlines: dict[str, float] = {}

    def generation(self) -> int:
        with self._lock:
            return self._generation

    def remaining(self, holder: str) -> float | None:
        """Seconds left on the copy (None: not known, or the copy is not trusted now)."""
        url = settings.REDIS_URL
        if not url:
            return None
        with self._lock:
            if self._owner != (os.getpid(), url):
                self._start(url)  # first use, after a fork, or another Redis
                return None
            if not self._live:
                return None
            deadline = self._deadlines.get(holder)
        if deadline is None:
            return None
        return max(0.0, deadline - time.monotonic())

    def keep(self, holder: str, remaining: float, generation: int) -> None:
        """Remember a wait read from Redis, unless an announcement came since the read."""
        with self._lock:
            if self._live and generation == self._generation:
                self._deadlines[holder] = time.monotonic() + remaining

    def forget(self, holder: str | None = None) -> None:
        """Drop one holder's copy (None: every copy); reads in flight are not kept."""
        with self._lock:
            self._generation += 1
            if holder is None:
                self._deadlines.clear()
            else:
                self._deadlines.pop(holder, None)

    # --- the listener -------------------------------------------------------------------

    def _start(self, url: str) -> None:
        """Start a listener for ``url`` in this process (lock held)."""
        self._owner = (os.getpid(), url)
        self._listener += 1
        self._live = False
        self._generation += 1
        self._deadlines.clear()
        thread = threading.Thread(
            target=self._listen,
            args=(self._listener, url, channel()),
            name="embargo-listener",
            daemon=True,
        )
        thread.start()

    def _current(self, number: int) -> bool:
        with self._lock:
            return number == self._listener and self._owner is not None

    def _set_live(self, number: int, live: bool) -> None:
        with self._lock:
            if number != self._listener:
                return
            self._live = live
            self._generation += 1
            self._deadlines.clear()

    def _listen(self, number: int, url: str, name: str) -> None:
        while self._current(number):
            try:
                client = redis.Redis.from_url(
                    url,
                    socket_timeout=HEALTH_CHECK_SECONDS * 2,
                    socket_connect_timeout=2,
                )
                pubsub = client.pubsub()  # type: ignore[no-untyped-call]
                try:
                    pubsub.subscribe(name)
                    self._follow(number, pubsub)
                finally:
                    pubsub.close()
                    client.close()
            except Exception as exc:  # Redis away or restarting: read the store meanwhile
                logger.info("embargo listener: %s; calls read the store meanwhile", exc)
            self._set_live(number, False)
            time.sleep(RECONNECT_SECONDS)

    def _follow(self, number: int, pubsub: redis.client.PubSub) -> None:
        # A PING every half interval; no answer within two intervals is a dead link (a
        # Redis that stopped answering without closing the connection).
        heard = pinged = time.monotonic()
        while self._current(number):
            now = time.monotonic()
            if now - heard > 2 * HEALTH_CHECK_SECONDS:
                raise ConnectionError("no answer to the listener's PING")
            if now - pinged > HEALTH_CHECK_SECONDS / 2:
                pubsub.ping()
                pinged = now
            message = pubsub.get_message(timeout=HEALTH_CHECK_SECONDS / 2)
            if message is None:
                continue
            heard = time.monotonic()
            if message["type"] == "subscribe":
                self._set_live(number, True)
            elif message["type"] == "message":
                data = message["data"]
                self.forget(data.decode() if isinstance(data, bytes) else str(data))


CACHE = EmbargoCache()
