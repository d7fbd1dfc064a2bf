"""What a platform client's error means for outbox work (the same for every kind)."""

from __future__ import annotations

from marketplace.outbox.kind import RATE_LIMITED, REJECTED, TRANSIENT, Outcome
from marketplace.platform.errors import PlatformError, PlatformRateLimited, PlatformRejected


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
