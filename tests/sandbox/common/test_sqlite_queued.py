"""The served sandbox's SQLite engine: writers queue on a lock in the process (woken when
it is free) instead of sleeping in SQLite's busy handler; reads never wait for it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from django.db.utils import ConnectionHandler

from sandbox.common.sqlite_queued import base

# The test database is not used: the mark lets these tests open connections of their own
# (to a file of their own) past pytest-django's guard.
pytestmark = pytest.mark.django_db


def _connection(path: Path) -> Any:
    handler = ConnectionHandler(
        {
            "default": {
                "ENGINE": "sandbox.common.sqlite_queued",
                "NAME": str(path),
                "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 30},
            }
        }
    )
    return handler["default"]


def _lock_free_elsewhere() -> bool:
    """Whether another thread could take the writers' lock right now."""
    free: list[bool] = []

    def probe() -> None:
        took = base._writer.acquire(blocking=False)
        if took:
            base._writer.release()
        free.append(took)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(5)
    return free[0]


def _write_in_thread(path: Path, done: threading.Event) -> threading.Thread:
    def write() -> None:
        other = _connection(path)
        other.cursor().execute("INSERT INTO t (x) VALUES (2)")  # autocommit: takes the lock
        other.close()
        done.set()

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_a_transaction_holds_the_writers_lock_until_it_commits(tmp_path: Path) -> None:
    path = tmp_path / "queued.sqlite3"
    first = _connection(path)
    first.cursor().execute("CREATE TABLE t (x integer)")
    first._start_transaction_under_autocommit()  # what atomic() does on SQLite
    first.cursor().execute("INSERT INTO t (x) VALUES (1)")
    assert not _lock_free_elsewhere()
    done = threading.Event()
    thread = _write_in_thread(path, done)
    # The other writer waits on the lock, not on SQLite: it cannot finish while we hold it.
    assert not done.wait(0.3)
    rows = first.cursor().execute("SELECT count(*) FROM t").fetchone()
    assert rows == (1,)
    first.commit()
    assert done.wait(5)
    assert _lock_free_elsewhere()
    thread.join(5)
    assert first.cursor().execute("SELECT x FROM t ORDER BY x").fetchall() == [(1,), (2,)]
    first.close()


def test_a_rollback_or_a_close_gives_the_lock_back(tmp_path: Path) -> None:
    path = tmp_path / "queued.sqlite3"
    first = _connection(path)
    first.cursor().execute("CREATE TABLE t (x integer)")
    first._start_transaction_under_autocommit()
    first.cursor().execute("INSERT INTO t (x) VALUES (1)")
    first.rollback()
    done = threading.Event()
    _write_in_thread(path, done).join(5)
    assert done.is_set()
    first._start_transaction_under_autocommit()
    first.close()  # a connection dropped inside a transaction must not keep the lock
    done.clear()
    _write_in_thread(path, done).join(5)
    assert done.is_set()
    assert _lock_free_elsewhere()


def test_reads_do_not_wait_for_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "queued.sqlite3"
    first = _connection(path)
    first.cursor().execute("PRAGMA journal_mode=WAL")
    first.cursor().execute("CREATE TABLE t (x integer)")
    first.cursor().execute("INSERT INTO t (x) VALUES (1)")
    first._start_transaction_under_autocommit()
    first.cursor().execute("INSERT INTO t (x) VALUES (2)")
    seen: list[Any] = []

    def read() -> None:
        other = _connection(path)
        seen.append(other.cursor().execute("SELECT count(*) FROM t").fetchone())
        other.close()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join(5)
    assert seen == [(1,)]  # the committed row only, read beside the open write
    first.rollback()
    first.close()
