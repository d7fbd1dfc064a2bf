"""The embedded Celery broker: kombu's filesystem transport, made safe to read.

kombu's ``filesystem`` transport creates each message file under its final name and
then writes it; a worker lists the folder every 0.1 s and could take the file while it
was still empty or half written. Its ``_get`` then raised ``JSONDecodeError`` and the
worker died (TRAPS.md, "Found by later runs"). This transport, registered as
``atomicfs://``, changes three things and keeps the rest of kombu's class:

* **Writes are atomic.** A message is written to a hidden temporary name in the same
  folder (``.<name>.tmp``, which no queue matches) and ``os.replace``-d into place, an
  atomic rename on POSIX: a reader sees the whole message or no file at all. The
  exchange tables in the control folder are created the same way (``os.link`` of a
  complete temporary file, so two processes binding at once never see an empty table).
* **A message is claimed before it is read.** The consumer renames it into
  ``<data folder>/.claimed/`` (atomic: of two consumers, one wins) instead of kombu's
  ``shutil.move`` to the system's temporary folder (a copy when that is another
  filesystem).
* **No message file can kill the consumer.** One that cannot be read or parsed (written
  by something else, cut short, not JSON) is moved to ``broken_folder`` and logged at
  ERROR with its name and the reason; the consumer goes on with the next message. A
  temporary file left for over ten minutes (its writer died before the rename) is set
  aside the same way. Nothing is lost silently, and the work itself is not lost either:
  the database is the truth and the beat sweepers re-queue it (DESIGN.md, principle 1).

Why not kombu's SQLAlchemy transport on a SQLite file: it needs SQLAlchemy as a new
dependency; its ``SELECT … FOR UPDATE`` is a no-op on SQLite, so two consumers can take
one message; SQLite lets one writer in at a time, so the web app, beat and the worker
publishing together meet "database is locked"; it keeps every delivered message as a row
for ever; and it has no fanout (``celery inspect``, remote control). This module is a
small subclass of a transport we already ran.

What it still shares with kombu's: a message held by a worker's main process when that
process is killed is lost (kombu keeps unacknowledged messages in memory); the sweepers
bring the work back. Development only: production uses Redis (``REDIS_URL``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
import uuid
from pathlib import Path
from queue import Empty
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads
from kombu.utils.objects import cached_property

logger = logging.getLogger(__name__)

ALIAS = "atomicfs"
TEMPORARY_SUFFIX = ".tmp"
CLAIM_FOLDER = ".claimed"
# A temporary file this old lost its writer: nobody will rename it into place.
ORPHAN_AFTER_SECONDS = 600.0
ORPHAN_CHECK_EVERY_SECONDS = 60.0


def register() -> None:
    """Make ``atomicfs://`` resolve to this transport (kombu refuses import paths in URLs)."""
    from kombu.transport import TRANSPORT_ALIASES

    TRANSPORT_ALIASES.setdefault(ALIAS, f"{__name__}:Transport")


def _temporary_name(final_name: str) -> str:
    # Starts with a dot, so ``name.partition(".")[2]`` never equals "<queue>.msg".
    return f".{final_name}.{uuid.uuid4().hex}{TEMPORARY_SUFFIX}"


class Channel(filesystem.Channel):
    """kombu's filesystem channel with atomic writes and reads that cannot fail."""

    _orphans_checked_at = 0.0

    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]
        """Put ``payload`` on ``queue``: written in full, then renamed into place."""
        name = f"{round(time.monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        folder = self.data_folder_out
        temporary = os.path.join(folder, _temporary_name(name))
        try:
            with open(temporary, "xb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(temporary, os.path.join(folder, name))
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.remove(temporary)
            raise ChannelError(f"Cannot add file {name!r} to {folder!r}") from exc

    def _get(self, queue: str) -> dict[str, Any]:  # type: ignore[override]
        """The oldest readable message of ``queue``; unreadable ones are set aside."""
        wanted = f"{queue}.msg"
        names = sorted(os.listdir(self.data_folder_in))
        self._orphans_set_aside(names)
        for name in names:
            if name.partition(".")[2] != wanted:
                continue
            claimed = os.path.join(self.claim_folder, name)
            try:
                os.rename(os.path.join(self.data_folder_in, name), claimed)
            except OSError:
                continue  # another consumer took it first
            try:
                with open(claimed, "rb") as file:
                    raw = file.read()
                message = loads(bytes_to_str(raw))
            except (OSError, ValueError) as exc:
                # ValueError: JSONDecodeError and UnicodeDecodeError are both ValueErrors.
                self._set_aside(claimed, name, f"{type(exc).__name__}: {exc}")
                continue
            if not isinstance(message, dict):
                self._set_aside(claimed, name, f"not a message: {type(message).__name__}")
                continue
            self._processed(claimed, name)
            return message
        raise Empty()

    def _processed(self, claimed: str, name: str) -> None:
        try:
            if self.store_processed:
                shutil.move(claimed, os.path.join(self.processed_folder, name))
            else:
                os.remove(claimed)
        except OSError as exc:
            logger.warning("embedded broker: could not clear %s after reading it: %s", name, exc)

    def _set_aside(self, path: str, name: str, reason: str) -> None:
        destination = os.path.join(self.broken_folder, name)
        try:
            Path(self.broken_folder).mkdir(parents=True, exist_ok=True)
            shutil.move(path, destination)
        except OSError as exc:
            logger.error(
                "embedded broker: message file %s could not be read (%s) nor moved to %s (%s)",
                path,
                reason,
                self.broken_folder,
                exc,
            )
            return
        logger.error(
            "embedded broker: message file %s could not be read (%s); moved to %s. "
            "Its work is not lost: the sweepers re-queue pending work from the database.",
            name,
            reason,
            destination,
        )

    def _orphans_set_aside(self, names: list[str]) -> None:
        now = time.monotonic()
        if now - self._orphans_checked_at < ORPHAN_CHECK_EVERY_SECONDS:
            return
        self._orphans_checked_at = now
        for name in names:
            if not (name.startswith(".") and name.endswith(TEMPORARY_SUFFIX)):
                continue
            path = os.path.join(self.data_folder_in, name)
            try:
                age = time.time() - os.stat(path).st_mtime
            except OSError:
                continue  # renamed into place meanwhile
            if age > ORPHAN_AFTER_SECONDS:
                self._set_aside(path, name, f"a write never finished ({age:.0f} s old)")

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str | None, queue: str) -> None:
        """Bind as kombu does, but create a new exchange table whole, never empty."""
        file: Path = self._exchange_file(exchange)  # type: ignore[attr-defined]  # stubs lag
        if not file.exists():
            self.control_folder.mkdir(parents=True, exist_ok=True)
            row = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
            temporary = file.with_name(_temporary_name(file.name))
            try:
                temporary.write_bytes(str_to_bytes(dumps([row])))
                os.link(temporary, file)  # fails if another process created it meanwhile
                return
            except FileExistsError:
                pass  # bind into the table the other process made, below
            except OSError:
                pass  # no hard links on this filesystem: kombu's way, below
            finally:
                temporary.unlink(missing_ok=True)
        super()._queue_bind(exchange, routing_key, pattern, queue)

    @cached_property
    def data_folder_in(self) -> str:
        # Made here too, not only at process start: ``celery call`` never starts Django.
        folder = str(self.transport_options.get("data_folder_in", "data_in"))
        os.makedirs(folder, exist_ok=True)
        return folder

    @cached_property
    def data_folder_out(self) -> str:
        folder = str(self.transport_options.get("data_folder_out", "data_out"))
        os.makedirs(folder, exist_ok=True)
        return folder

    @cached_property
    def claim_folder(self) -> str:
        folder = os.path.join(self.data_folder_in, CLAIM_FOLDER)
        os.makedirs(folder, exist_ok=True)
        return folder

    @cached_property
    def broken_folder(self) -> str:
        return str(
            self.transport_options.get("broken_folder")
            or os.path.join(self.data_folder_in, "broken")
        )


class Transport(filesystem.Transport):
    """The filesystem transport with :class:`Channel`; state is shared with kombu's."""

    Channel = Channel
    driver_type = ALIAS
    driver_name = ALIAS
