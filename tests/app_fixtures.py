"""Fixtures shared by the app's tests (users, sellers, a Celery worker)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model


@pytest.fixture
def staff_user(db):
    return get_user_model().objects.create_user(
        username="staff", password="staff-pass-123", is_staff=True, is_superuser=True
    )


@pytest.fixture
def celery_worker_thread(transactional_db) -> Iterator[object]:
    """A real Celery worker (in a thread of this process) on the configured broker.

    It consumes from the real broker (Redis in CI, the filesystem transport
    otherwise) and runs the real tasks against the test database; tests using it need
    a transactional database so the worker's connection sees their rows.
    """
    from celery.contrib.testing.worker import start_worker

    from marketplace.celery import app

    # Tests without a worker leave wake-ups in the broker; a fresh worker must not
    # spend this test's time on another test's stale messages.
    app.control.purge()
    # ... nor find the push doorbell still rung by a test whose drain message was purged.
    from marketplace.orders.services.doorbell import push_drain_doorbell_clear

    push_drain_doorbell_clear()
    with start_worker(
        app, pool="threads", concurrency=2, perform_ping_check=False, shutdown_timeout=30
    ) as worker:
        yield worker
