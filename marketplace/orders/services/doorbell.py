"""The push doorbell: wake a push drain without one broker message per order.

Pushes are drained in batches (``services/push.py``): a drain task claims whatever is
due, many orders at a time. Intake at hundreds of orders a second would still send one
message per order if every change woke the workers itself, and each message costs a
worker more than the batched push of its order. So a change *rings*: with Redis, a key
set with ``SET NX`` says "a drain is already on its way" and further rings send nothing
until a drain starts and clears it.

Losing nothing: the drain clears the key *before* its first claim, so a change committed
after that claim rings again; the key expires after ``PUSH_DOORBELL_SECONDS``, so a lost
drain message delays pushes by seconds, not forever; the beat sweeper rings with
``force=True`` whenever anything is due. Without Redis (the embedded development setup)
there is nothing shared to dedupe with, and every ring sends a drain message.
"""

from __future__ import annotations

import logging

from django.conf import settings

from marketplace.redis_client import redis_client

logger = logging.getLogger(__name__)

KEY = "orders:push-drain-doorbell"


def push_drain_ring(*, force: bool = False) -> bool:
    """Make sure a push drain is on its way; returns True if a message was sent."""
    from marketplace.orders.tasks import orders_push_drain_task  # tasks import services

    if settings.REDIS_URL:
        try:
            client = redis_client()
            ttl = max(1, int(settings.PUSH_DOORBELL_SECONDS))
            if force:
                client.set(KEY, "1", ex=ttl)
            elif not client.set(KEY, "1", nx=True, ex=ttl):
                return False  # a drain is queued and has not started yet: it will see us
        except Exception:  # Redis trouble: send the message rather than risk a lost wake-up
            logger.warning("push doorbell: Redis unavailable, sending the wake-up anyway")
    orders_push_drain_task.delay()
    return True


def push_drain_doorbell_clear() -> None:
    """A drain starts: from now on a change must ring again."""
    if not settings.REDIS_URL:
        return
    try:
        redis_client().delete(KEY)
    except Exception:
        logger.warning("push doorbell: Redis unavailable; the key expires by itself")
