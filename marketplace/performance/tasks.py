"""The scorecards' Celery tasks: thin, each over one service."""

from __future__ import annotations

from celery import shared_task

from marketplace.performance.crossings import crossing_emails_send
from marketplace.performance.refresh import scorecards_refresh


@shared_task(ignore_result=True)
def scorecards_refresh_task() -> int:
    """Beat: every seller's figures for the day, and the thresholds crossed."""
    return scorecards_refresh().rows


@shared_task(ignore_result=True, acks_late=True)
def crossing_emails_task() -> int:
    """Queued by the refresh on commit: one e-mail per seller who crossed a threshold."""
    return crossing_emails_send()
