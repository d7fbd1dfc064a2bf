"""SQLite for the served sandbox: its writers queue in the process instead of polling.

SQLite lets one transaction write at a time. A second writer meets ``SQLITE_BUSY`` and
SQLite's busy handler sleeps and tries again, each sleep longer (1, 2, 5 … 100 ms), so a
writer may sleep 100 ms after the lock it waits for came free. Measured under four calls
in flight (bench P1, 3 000 PUTs): ~100 calls slept 100 to 900 ms, a quarter of all the time
calls were in flight, while the database was idle most of those sleeps. The platform the
sandbox stands for has no such stall, and it made the sandbox's throughput depend on how
its callers happened to be timed.

Here the sandbox's threads (one gunicorn process) take a process-wide lock before
``BEGIN`` and hold it until ``COMMIT``/``ROLLBACK``; a write outside a transaction holds
it for its statement. A waiting writer is woken the moment the lock is free. Reads never
take it (WAL lets them run beside a writer). Other processes (the management commands)
still meet SQLite's own busy timeout. Only ``python -m sandbox serve`` uses this engine
(``SANDBOX_QUEUED_WRITERS``); the in-process test settings keep Django's own.
"""

from __future__ import annotations

import threading
from typing import Any

from django.db.backends.sqlite3 import base

# Re-entrant: BEGIN itself goes through the cursor while the transaction holds it.
_writer = threading.RLock()


def _reads_only(query: str) -> bool:
    return query.lstrip()[:6].upper() in ("SELECT", "PRAGMA")


class QueuedCursor(base.SQLiteCursorWrapper):
    def execute(self, query: str, params: Any = None) -> Any:
        if self.connection.in_transaction or _reads_only(query):
            return super().execute(query, params)
        with _writer:
            return super().execute(query, params)

    def executemany(self, query: str, param_list: Any) -> Any:
        if self.connection.in_transaction:
            return super().executemany(query, param_list)
        with _writer:
            return super().executemany(query, param_list)


class DatabaseWrapper(base.DatabaseWrapper):
    # Django's private transaction hooks (django/db/backends/base/base.py), which the
    # stubs leave out; each calls Django's own and then gives the lock back.
    _holds_writer = False

    def create_cursor(self, name: str | None = None) -> Any:
        return self.connection.cursor(factory=QueuedCursor)

    def _start_transaction_under_autocommit(self) -> None:
        _writer.acquire()
        try:
            super()._start_transaction_under_autocommit()  # type: ignore[misc]  # not in the stubs
        except BaseException:
            _writer.release()
            raise
        self._holds_writer = True

    def _writer_release(self) -> None:
        if self._holds_writer:
            self._holds_writer = False
            _writer.release()

    def _commit(self) -> Any:
        try:
            return super()._commit()  # type: ignore[misc]  # not in the stubs
        finally:
            self._writer_release()

    def _rollback(self) -> Any:
        try:
            return super()._rollback()  # type: ignore[misc]  # not in the stubs
        finally:
            self._writer_release()

    def _close(self) -> Any:
        try:
            return super()._close()  # type: ignore[misc]  # not in the stubs
        finally:
            self._writer_release()
