"""One writer per grant: concurrent refreshes of one connection spend the refresh token once.

Needs PostgreSQL: select_for_update is a no-op on SQLite (TRAPS.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
import requests
from django.db import connection as db
from django.utils import timezone

from sellers import services, vault
from sellers.models import PlatformConnection, Seller
from tests.support.app_fixtures import Platform

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 20


def run_concurrently(call: Callable[[], str]) -> tuple[list[str], list[BaseException]]:
    barrier = threading.Barrier(THREADS)
    tokens: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def worker() -> None:
        try:
            barrier.wait(timeout=10)
            token = call()
            with lock:
                tokens.append(token)
        except BaseException as exc:
            with lock:
                errors.append(exc)
        finally:
            db.close()  # this thread's own connection

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return tokens, errors


def assert_one_refresh_and_working_tokens(
    platform: Platform, connection: PlatformConnection, tokens: list[str]
) -> None:
    counters = platform.counters()
    assert counters["token_requests"].get("refresh_token") == 1
    assert counters["refresh_token_reuse"] == 0
    assert len(tokens) == THREADS
    assert len(set(tokens)) == 1
    assert tokens[0] != connection.access_token
    answer = requests.get(
        platform.sandbox.api_url + "/orders",
        headers={"Authorization": f"Bearer {tokens[0]}"},
        timeout=10,
    )
    assert answer.status_code == 200
    assert PlatformConnection.objects.get(id=connection.id).access_token == tokens[0]


def test_twenty_callers_needing_a_fresh_token_cause_one_refresh(
    seller: Seller, platform: Platform
) -> None:
    connection = platform.connect(seller)
    PlatformConnection.objects.filter(id=connection.id).update(
        access_token_expires_at=timezone.now() + timedelta(seconds=30)
    )

    tokens, errors = run_concurrently(
        lambda: services.connection_access_token(connection_id=connection.id)
    )

    assert errors == []
    assert_one_refresh_and_working_tokens(platform, connection, tokens)


def test_twenty_callers_forcing_a_refresh_after_a_401_cause_one_refresh(
    seller: Seller, platform: Platform
) -> None:
    connection = platform.connect(seller)
    stale = vault.token_fingerprint(connection.access_token)

    def after_401() -> str:
        return services.connection_refresh(
            connection_id=connection.id, force=True, stale_token_fingerprint=stale
        ).access_token

    tokens, errors = run_concurrently(after_401)

    assert errors == []
    assert_one_refresh_and_working_tokens(platform, connection, tokens)
