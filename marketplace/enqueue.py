"""Starting a Celery task from a service: the one way in this codebase.

Tasks are thin and import the services they run; a service that starts a task names it
here by its registered name (a ``*_TASK`` constant beside the caller), so neither module
imports the other: no import cycle, and no import inside a function to dodge one. Each
app's ``apps.py`` imports its ``tasks`` module at start, so the name is registered in every
process and an eager Celery (the tests') runs it in place.
``tests/marketplace/test_enqueue.py`` checks every ``*_TASK`` name is a registered task.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from marketplace.celery import app


def task_enqueue(
    name: str,
    *args: Any,
    countdown: float = 0.0,
    after_commit: bool = True,
    **options: Any,
) -> None:
    """Queue the task ``name`` with ``args``.

    ``after_commit`` (the default) sends it once the current transaction commits: the
    worker must see the rows the caller just wrote, and a rolled-back caller starts
    nothing. ``countdown`` delays it (a linger, the platform's wait, a backoff); under an
    eager Celery a delayed start is dropped instead of run at once (a drain lingering
    for a second would call itself in a loop): the beat's sweep comes back for it.
    ``options`` go to ``apply_async`` (``queue``, ``priority`` …).
    """
    if countdown > 0 and app.conf.task_always_eager:
        return
    signature = app.signature(name, args=args)
    if countdown > 0:
        options["countdown"] = countdown

    def send() -> None:
        signature.apply_async(**options)

    if after_commit:
        transaction.on_commit(send)
    else:
        send()
