"""Project-wide test configuration.

* ``REQUIRE_SERVICES=1`` (CI) turns "Postgres/Redis not configured" from a skip into
  a failure, so a green CI run really exercised row locks and the Redis broker.
* Tests marked ``postgres`` are skipped on SQLite otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

# The Playwright fixture keeps an asyncio loop running in the main thread; Django
# would otherwise refuse ORM calls from browser tests (see TRAPS.md).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytest_plugins = ["tests.support.sandbox_fixtures", "tests.support.app_fixtures"]

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"


def _database_vendor() -> str:
    from django.db import connection

    return connection.vendor


def _sqlite_flush_keeps_the_ledger_append_only() -> None:
    """Django's ``flush`` (the reset after every transactional test) deletes rows on
    SQLite, which the ledger's append-only triggers refuse (Postgres truncates, which no
    row trigger sees). On SQLite the flush drops the DELETE triggers, empties the tables
    and creates the triggers again, in its one transaction."""
    from django.db.backends.sqlite3.base import DatabaseWrapper

    from marketplace.returns.append_only import sqlite_delete_triggers

    operations = DatabaseWrapper.ops_class
    original = operations.sql_flush

    def sql_flush(
        self: Any,
        style: Any,
        tables: Sequence[str],
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        statements = original(
            self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
        triggers = sqlite_delete_triggers()
        return [drop for drop, _ in triggers] + statements + [create for _, create in triggers]

    operations.sql_flush = sql_flush  # type: ignore[method-assign]


def pytest_sessionstart(session: pytest.Session) -> None:
    if _database_vendor() == "sqlite":
        _sqlite_flush_keeps_the_ledger_append_only()
    if not REQUIRE_SERVICES:
        return
    from django.conf import settings

    problems = []
    if _database_vendor() != "postgresql":
        problems.append("DATABASE_URL does not point at PostgreSQL")
    if not settings.REDIS_URL:
        problems.append("REDIS_URL is not set")
    else:
        import redis

        try:
            redis.Redis.from_url(settings.REDIS_URL).ping()
        except redis.RedisError as exc:
            problems.append(f"Redis at REDIS_URL does not answer: {exc}")
    if problems:
        raise pytest.UsageError("REQUIRE_SERVICES=1 but " + "; ".join(problems))


CHROMIUM_PATH = os.environ.get("CHROMIUM_PATH", "/usr/lib/chromium/chromium")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # On a developer's machine without the services, skip what cannot mean anything;
    # with REQUIRE_SERVICES=1 nothing is skipped, so a missing piece fails loudly.
    if REQUIRE_SERVICES:
        return
    skip_pg = pytest.mark.skip(
        reason="needs PostgreSQL (set DATABASE_URL); SQLite has no row locks"
    )
    skip_browser = pytest.mark.skip(
        reason=f"needs Debian's Chromium at {CHROMIUM_PATH} (apt-get install -y chromium)"
    )
    on_postgres = _database_vendor() == "postgresql"
    has_chromium = os.path.exists(CHROMIUM_PATH)
    for item in items:
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(skip_pg)
        if "browser" in item.keywords and not has_chromium:
            item.add_marker(skip_browser)


@pytest.fixture(autouse=True)
def _live_dashboard_numbers(settings: object) -> None:
    # Tests assert numbers right after changing data: compute the overview's aggregates
    # on each render instead of reading the beat job's snapshot (tested on its own).
    settings.DASHBOARD_ACTIVITY_MAX_AGE = 0


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """On SQLite, a test database *file* instead of shared-cache memory.

    Real Celery worker threads, live_server threads and the test share the database;
    shared-cache memory databases use table locks that fail at once ("database table
    is locked") instead of waiting. A file with WAL and a busy timeout can wait.
    """
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        folder = Path(settings.CELERY_DATA_DIR)
        folder.mkdir(parents=True, exist_ok=True)
        database.setdefault("TEST", {})["NAME"] = str(folder / "test-db.sqlite3")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    # Debian's Chromium: the real binary, not the /usr/bin wrapper script (TRAPS.md).
    # Playwright's own browser download cannot work here.
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM_PATH,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture(autouse=True)
def _embargo_copy_forgotten() -> None:
    # Tests wipe Redis keys and roll back rows between tests; a process's copy of the
    # embargoes it read (marketplace/platform/embargo_cache.py) must not outlive them.
    from marketplace.platform.embargo_cache import CACHE

    CACHE.forget()
