"""What came of a call: the outcomes every kind shares, and what a platform client's
error means for outbox work (the same for every kind)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from marketplace.platform.errors import PlatformError, PlatformRateLimited, PlatformRejected

# Outcomes every kind shares; a kind may add its own (``OutboxKind.other``).
OK = "ok"
UNSENT = "unsent"  # not started: the lease would have run out first
WAITING = "waiting"  # the seller's connection (or the API user's sign-in) is not live
TRANSIENT = "transient"  # 5xx, timeout, unreadable answer: back off, bounded
RATE_LIMITED = "rate_limited"  # 429: the platform's wait, not counted
REJECTED = "rejected"  # 4xx: the platform refuses the call as it is
SKIPPED = "skipped"
WORKER_LOST = "the worker sending this stopped before it recorded an answer"


@dataclass(frozen=True)
class Outcome:
    kind: str
    message: str = ""
    status: int | None = None
    retry_after: float | None = None
    response: dict[str, Any] | None = None
    # The kind's own account of the call (e.g. what an EDRTS drain sent).
    detail: Any = None


def platform_error_outcome(exc: PlatformError) -> Outcome:
    """429: the platform's wait; other 4xx: refused as it is; the rest (5xx, timeouts,
    unreadable answers, a 401 that survived a refresh): transient, bounded by the dead
    letter."""
    if isinstance(exc, PlatformRateLimited):
        return Outcome(
            RATE_LIMITED, message=exc.message, status=exc.status, retry_after=exc.retry_after
        )
    if isinstance(exc, PlatformRejected):
        return Outcome(REJECTED, message=exc.message, status=exc.status)
    return Outcome(TRANSIENT, message=exc.message, status=exc.status, retry_after=exc.retry_after)
