"""Celery tasks of returns and refunds: thin wrappers over one service each, idempotent
and safe to run late or twice (the database says what is due)."""

from __future__ import annotations

from celery import shared_task

from marketplace.returns.services.steps import return_steps_drain


@shared_task(acks_late=True, ignore_result=True)
def return_steps_drain_task() -> int:
    """Run due platform steps (push, complete, report); beat runs it as the sweeper too."""
    return return_steps_drain()
