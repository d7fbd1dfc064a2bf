"""The doorbell: wake a drain without one broker message per row.

Work is drained in batches: a drain task claims whatever is due, many rows at a time.
Intake at hundreds of orders a second would still send one message per order if every
change woke the workers itself, and each message costs a worker more than the batched
send of its row. So a change *rings*: with Redis, a key set with ``SET NX`` says "a drain
is already on its way" and further rings send nothing until a drain starts and clears it.

Losing nothing: the drain clears the key *before* its first claim, so a change committed
after that claim rings again; the key expires after ``PUSH_DOORBELL_SECONDS``, so a lost
drain message delays work by seconds, not forever; the sweeper rings with ``force=True``
whenever anything is due. Without Redis (the embedded development setup) there is nothing
shared to dedupe with, and every ring sends a drain message.
"""

from __future__ import annotations

import logging

from django.conf import settings

from marketplace.enqueue import task_enqueue
from marketplace.redis_client import redis_client

logger = logging.getLogger(__name__)


class Doorbell:
    def __init__(self, *, key: str, task: str) -> None:
        self.key = key
        self.task = task  # the drain task's registered name

    def ring(self, *, force: bool = False) -> bool:
        """Make sure a drain is on its way; returns True if a message was sent."""
        if settings.REDIS_URL:
            try:
                client = redis_client()
                ttl = max(1, int(settings.PUSH_DOORBELL_SECONDS))
                if force:
                    client.set(self.key, "1", ex=ttl)
                elif not client.set(self.key, "1", nx=True, ex=ttl):
                    return False  # a drain is queued and has not started yet: it will see us
            except Exception:  # Redis trouble: send the message rather than risk a lost wake-up
                logger.warning("%s: Redis unavailable, sending the wake-up anyway", self.key)
        task_enqueue(self.task, after_commit=False)
        return True

    def clear(self) -> None:
        """A drain starts: from now on a change must ring again."""
        if not settings.REDIS_URL:
            return
        try:
            redis_client().delete(self.key)
        except Exception:
            logger.warning("%s: Redis unavailable; the key expires by itself", self.key)
