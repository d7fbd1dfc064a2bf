"""What the control API's reset clears, room by room.

Each room registers its tables and in-memory state from its ``AppConfig.ready``; rooms
register in ``INSTALLED_APPS`` order (a room after the rooms it depends on), and tables
are emptied in the reverse order, children first, with raw deletes (the ORM's cascade
collection is slow after a 5k-order benchmark)."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import connection, models, transaction


@dataclass(frozen=True)
class Room:
    name: str
    data_models: Sequence[type[models.Model]]
    account_models: Sequence[type[models.Model]]
    memory_reset: Callable[[], None] | None


_rooms: dict[str, Room] = {}


def register(
    name: str,
    *,
    data_models: Sequence[type[models.Model]] = (),
    account_models: Sequence[type[models.Model]] = (),
    memory_reset: Callable[[], None] | None = None,
) -> None:
    """Idempotent per ``name`` (``ready`` may run more than once in tests)."""
    _rooms[name] = Room(name, tuple(data_models), tuple(account_models), memory_reset)


def reset_all(*, keep_accounts: bool) -> None:
    rooms = list(_rooms.values())
    tables = [m for room in reversed(rooms) for m in room.data_models]
    if not keep_accounts:
        tables += [m for room in reversed(rooms) for m in room.account_models]
    with transaction.atomic(), connection.cursor() as cursor:
        for model in tables:
            cursor.execute(f"DELETE FROM {model._meta.db_table}")  # noqa: S608
    for room in rooms:
        if room.memory_reset is not None:
            room.memory_reset()
