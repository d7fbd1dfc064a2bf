"""The worker's consumer: Celery's own, with its reconnect made to survive a broker restart.

Celery 5.7.0's ``Consumer.on_connection_error_after_connected`` first ``collect()``s the
lost connection (kombu releases its transport: ``transport.client = None``) and then
``close()``s it. When tasks had been delivered and not yet acknowledged (``acks_late``:
every task of ours, so nearly always under load), that close asks the Redis transport to
restore them, and the transport builds a client from the client it no longer has:
``AttributeError: 'NoneType' object has no attribute 'hostname'``. Celery counts that as
unrecoverable and the worker exits; nothing runs until something restarts it. The soak's
broker restart found it, and ``tests/stack/test_broker_restart.py`` reproduces it (the
first restart with tasks in flight kills a stock worker). Celery 5.6 only collected.

Here the close after the collect may fail that way and is logged instead: the collect
already closed the sockets, so nothing leaks, and the messages that were in flight are
not lost by it either (they sit in Redis's unacked set, restored after the visibility
timeout; after a restart that wiped Redis, the beat sweeps re-queue pending work from the
database). Every other error still propagates. Configured by ``CELERY_WORKER_CONSUMER``.
Remove when Celery's own reconnect closes a collected connection cleanly: the test above
then passes with the stock consumer too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from celery.worker.consumer import Consumer

logger = logging.getLogger(__name__)


class ReconnectingConsumer(Consumer):
    def on_connection_error_after_connected(self, exc: Exception) -> None:
        connection = self.connection
        if connection is not None:
            # On this connection only: the one being given up
            connection.close = _close_after_collect(connection.close)  # type: ignore[method-assign]
        super().on_connection_error_after_connected(exc)


def _close_after_collect(close: Callable[[], object]) -> Callable[[], None]:
    def close_collected() -> None:
        try:
            close()
        except AttributeError as error:  # the transport was released by collect()
            logger.warning(
                "broker connection lost: closing the collected connection failed (%r); "
                "its sockets are already closed, reconnecting",
                error,
            )

    return close_collected
