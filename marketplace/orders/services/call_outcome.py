"""The outcome of one platform call made for a seller (an order push, a return's step).

The seller's connection errors first (not live: wait for the seller; the refresh
unavailable: transient), then the platform's errors as the outbox engine reads them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from marketplace.outbox.outcomes import OK, TRANSIENT, WAITING, Outcome, platform_error_outcome
from marketplace.platform.errors import PlatformAuthError, PlatformError
from sellers.errors import ConnectionNotLive, SellerConnectionError, TokenRefreshUnavailable
from sellers.models import PlatformConnection

logger = logging.getLogger(__name__)


def seller_call_outcome(
    call: Callable[[], dict[str, Any] | Outcome | None], *, connection_id: int, what: str
) -> Outcome:
    """Run ``call`` and say what came of it (an ``Outcome`` it returns stands: the call
    decided itself, e.g. not to send); ``what`` names the work in the log."""
    try:
        response = call()
    except ConnectionNotLive as exc:  # includes ReauthorizationRequired
        return Outcome(WAITING, message=str(exc) or "connection not live")
    except TokenRefreshUnavailable as exc:
        return Outcome(
            TRANSIENT, message=f"token refresh unavailable: {exc}", retry_after=exc.retry_after
        )
    except SellerConnectionError as exc:  # vault misconfigured and the like
        return Outcome(TRANSIENT, message=str(exc))
    except PlatformAuthError as exc:
        # A 401 survived a forced refresh. If the grant is gone the vault has marked the
        # connection; otherwise treat it as transient (bounded by the dead letter).
        connection = PlatformConnection.objects.filter(pk=connection_id).first()
        if connection is None or not connection.is_live:
            return Outcome(WAITING, message=exc.message, status=exc.status)
        return platform_error_outcome(exc)
    except PlatformError as exc:
        return platform_error_outcome(exc)
    except Exception as exc:
        logger.exception("unexpected error: %s", what)
        return Outcome(TRANSIENT, message=f"unexpected error: {exc!r}")
    if isinstance(response, Outcome):
        return response
    return Outcome(OK, response=response)
