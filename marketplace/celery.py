"""The Celery application. Configuration lives in settings (``CELERY_*``).

Every task counts its deliveries (``DeliveryCountedTask``): with ``acks_late`` and
``reject_on_worker_lost`` a message whose task kills its worker (out of memory, a
segfault in a parser) is requeued every time, for ever. The count lives in Redis keyed
by the task's id and retry number, so it survives the worker it counts; after
``CELERY_TASK_MAX_DELIVERIES`` the message is acknowledged without running, logged, and
recorded as a dead letter staff see in the admin (``privacy.TaskDeadLetter``). The work
itself is not lost: the database says what is pending, and the row's own counters (a
feed run's attempts, a step's failures) cap what a sweep re-queues. Without Redis (the
embedded broker of ``make run``) nothing is counted.
"""

import logging
import logging.config
import os
from typing import Any

from celery import Celery, Task
from celery.signals import setup_logging
from django.apps import apps
from django.conf import settings

from marketplace.redis_client import redis_client

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "marketplace.settings")

logger = logging.getLogger(__name__)

# Longer than the broker's visibility timeout times the cap: a count outlives the
# redeliveries it counts, and then goes.
DELIVERY_COUNT_TTL_SECONDS = 2 * 86400


def delivery_count(task_id: str, retries: int) -> int | None:
    """This delivery's number (1 for the first), or None when it cannot be counted."""
    if not settings.REDIS_URL:
        return None
    key = f"celery:deliveries:{task_id}:{retries}"
    try:
        client = redis_client()
        with client.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, DELIVERY_COUNT_TTL_SECONDS)
            count, _ = pipe.execute()
    except Exception:  # a Redis hiccup must not stop every task: run uncounted
        logger.warning("could not count the delivery of task %s", task_id, exc_info=True)
        return None
    return int(count)


def _dead_letter_record(task_name: str, task_id: str, deliveries: int) -> None:
    # By name from the registry: this module loads before the apps (marketplace/__init__).
    try:
        apps.get_model("privacy", "TaskDeadLetter").objects.create(
            task_name=task_name[:200], task_id=task_id[:64], deliveries=deliveries
        )
    except Exception:  # the log line above already tells; never fail the ack
        logger.exception("could not record the dead letter of task %s", task_id)


class DeliveryCountedTask(Task[..., Any]):
    """A task that refuses to run a message delivered more than the cap (see above)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        request = self.request
        if request.id and not request.is_eager and request.delivery_info is not None:
            count = delivery_count(request.id, request.retries or 0)
            if count is not None and count > settings.CELERY_TASK_MAX_DELIVERIES:
                logger.error(
                    "dead letter: task %s[%s] delivered %d times (its worker died each "
                    "time); dropped without running",
                    self.name,
                    request.id,
                    count,
                )
                _dead_letter_record(self.name, request.id, count)
                return None
        return super().__call__(*args, **kwargs)


@setup_logging.connect
def django_logging_for_workers(**kwargs: Any) -> None:
    """Workers and beat log through ``settings.LOGGING``, redaction filter included.

    Without a receiver of this signal Celery "hijacks" the root logger at start: it drops
    the handlers Django configured and installs its own, which has no redaction filter, so
    a token in a worker's exception would reach its log in clear. It also sets the root
    level from ``--loglevel`` (the embedded test worker passes ``error``, which silenced
    every INFO line of the process). ``LOG_LEVEL`` is the one level setting; Celery's
    ``--loglevel`` is ignored.
    """
    logging.config.dictConfig(settings.LOGGING)


class MarketplaceCelery(Celery):
    # A method, not a receiver of the on_configure Signal (the stub knows only that): Celery
    # still calls the method form (app/base.py ``_load_config``), and lets its exception
    # stop the process; a Signal logs a receiver's exception and goes on.
    def on_configure(self) -> None:  # type: ignore[override]
        # Workers and beat run no Django system checks: when the configuration is first
        # read (at their start), production refuses development values as check does.
        from marketplace.config_checks import production_start_check

        production_start_check()


app = MarketplaceCelery("marketplace", task_cls=DeliveryCountedTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
