"""Celery entry points for the token vault: thin wrappers over sellers.services."""

from __future__ import annotations

import random

from celery import Task, shared_task

from sellers import services
from sellers.errors import ConnectionNotLive, TokenRefreshUnavailable
from sellers.models import PlatformConnection

# Backoff for transient refresh failures, capped well below the broker's visibility
# timeout (600 s) so a delayed retry is never redelivered twice.
RETRY_BASE_SECONDS = 15
RETRY_MAX_SECONDS = 300


@shared_task(bind=True, acks_late=True, max_retries=8)
def connection_refresh_task(self: Task[[int], None], connection_id: int) -> None:
    try:
        services.connection_refresh(connection_id=connection_id)
    except (ConnectionNotLive, PlatformConnection.DoesNotExist):
        return  # the connection's state already says why; nothing to retry
    except TokenRefreshUnavailable as exc:
        # The current access token is still valid for a while (we refresh 10 min early);
        # retry with backoff, and the sweep re-queues if retries run out.
        backoff = min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2**self.request.retries)
        countdown = max(backoff, min(exc.retry_after or 0, RETRY_MAX_SECONDS))
        raise self.retry(exc=exc, countdown=countdown + random.uniform(0, 5)) from exc


@shared_task(acks_late=True)
def connection_refresh_sweep_task() -> int:
    return services.connection_refresh_sweep()


@shared_task(acks_late=True)
def refresh_token_expiry_sweep_task() -> dict[str, int]:
    result = services.refresh_token_expiry_sweep()
    return {"lapsed": result.lapsed, "warned": result.warned}
