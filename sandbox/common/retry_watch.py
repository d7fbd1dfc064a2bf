"""Early retries: a seller's requests that arrive before the wait a 429/503 asked for.

When a seller-scoped answer (every ``/api/v1`` endpoint but the token endpoint and the
authorize page) is a 429 or 503 with ``Retry-After`` or ``X-Rate-Limit-Reset``, the
sandbox remembers, per (client, seller) of the bearer grant, when it sent that answer and
until when the client must wait. A later request for the same seller arriving inside
that window is an ``early_retry`` violation, except calls already in flight: a request
that arrived before the answer was sent is fine, and so is one from another caller
arriving within the grace after it (``switches.retry_grace_seconds``, default 0.4 s:
a sibling thread or worker may have sent it before any of them could read the 429, and
a loaded machine delays that reading). Two arrivals get no grace, because they were
certainly sent after the client read the answer: one on the same keep-alive connection
(HTTP/1.1 sends a request only after the previous answer), and the same method and path
again (the retry itself). Wall-clock seconds, as the headers are.
"""

import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse

from sandbox.common import switches, violations

WAIT_STATUSES = (429, 503)
# X-Rate-Limit-Reset above this is Unix seconds; below, seconds to wait (reset_format).
_EPOCH_THRESHOLD = 1_000_000_000


@dataclass(frozen=True)
class Wait:
    sent_at: float
    until: float
    status: int
    request_id: str
    # Who got the answer: its TCP connection and the request it answered.
    connection: tuple[str, str] = ("", "")
    target: tuple[str, str] = ("", "")


def _connection(request: HttpRequest) -> tuple[str, str]:
    # gunicorn puts the peer's port in the environ; without it, no connection is known.
    return (request.META.get("REMOTE_ADDR", ""), str(request.META.get("REMOTE_PORT", "")))


def _target(request: HttpRequest) -> tuple[str, str]:
    return (request.method or "", request.path)


class WaitBook:
    """The waits a sandbox answer asked for, per holder (a seller's grant, an API token),
    and the early requests that break them."""

    def __init__(self, kind: str = violations.EARLY_RETRY) -> None:
        self._kind = kind
        self._lock = threading.Lock()
        self._waits: dict[Hashable, list[Wait]] = {}

    def note_answer(self, key: Hashable, request: HttpRequest, response: HttpResponse) -> None:
        """After answering: a 429/503 that says how long to wait starts a wait for ``key``."""
        if response.status_code not in WAIT_STATUSES:
            return
        sent_at = time.time()
        until = wait_until(response, sent_at=sent_at)
        if until is not None:
            wait = Wait(
                sent_at,
                until,
                response.status_code,
                getattr(request, "sandbox_request_id", ""),
                connection=_connection(request),
                target=_target(request),
            )
            with self._lock:
                self._waits.setdefault(key, []).append(wait)

    def check_arrival(
        self, key: Hashable, request: HttpRequest, *, arrived_at: float, seller: str, client_id: str
    ) -> None:
        """Before answering: count the request as an early retry if it breaks a wait."""
        wait = self._breached(key, request, arrived_at)
        if wait is None:
            return
        violations.violation_record(
            kind=self._kind,
            seller=seller,
            client_id=client_id,
            request_id=getattr(request, "sandbox_request_id", ""),
            detail=(
                f"{request.method} {request.path} arrived "
                f"{arrived_at - wait.sent_at:.3f} s after a {wait.status} "
                f"(request {wait.request_id}) that asked to wait "
                f"{wait.until - wait.sent_at:.3f} s"
            ),
        )

    def _breached(self, key: Hashable, request: HttpRequest, arrived_at: float) -> Wait | None:
        """The wait this arrival breaks (the longest if several); forgets waits that are over."""
        connection, target = _connection(request), _target(request)

        def grace(wait: Wait) -> float:
            same_connection = connection[1] != "" and wait.connection == connection
            if same_connection or wait.target == target:
                return 0.0
            return switches.current.retry_grace_seconds

        now = time.time()
        with self._lock:
            waits = [w for w in self._waits.get(key, []) if w.until > now]
            if waits:
                self._waits[key] = waits
            else:
                self._waits.pop(key, None)
        breached = [w for w in waits if w.sent_at + grace(w) < arrived_at < w.until]
        return max(breached, key=lambda w: w.until) if breached else None

    def reset(self) -> None:
        with self._lock:
            self._waits.clear()


def wait_until(response: HttpResponse, *, sent_at: float) -> float | None:
    """The earliest moment a client honouring either header may call again."""
    deadlines = []
    retry_after = response.get("Retry-After", "").strip()
    if retry_after.isdigit():
        deadlines.append(sent_at + int(retry_after))
    reset = response.get("X-Rate-Limit-Reset", "").strip()
    if reset.isdigit():
        value = int(reset)
        deadlines.append(value if value > _EPOCH_THRESHOLD else sent_at + value)
    return min(deadlines) if deadlines else None
