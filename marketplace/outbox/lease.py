"""The one claim-with-lease of the codebase: a row worked on by one worker at a time, with
no lock held while it works.

Any model with ``claim_token`` (blank: free) and ``lease_until`` (when its holder is
presumed lost) can be leased, and every write of those two columns is here
(``tests/marketplace/outbox/test_lease.py`` holds that). A holder proves itself with its
random token; a lease that ran out is free again, so a worker that dies delays the work
by one lease, never loses it.

* **Lock, decide, stamp** (one short transaction, the caller's): ``lock_named`` (ordered
  by id, so two callers cannot deadlock; waiting or skipping locked rows) or
  ``lock_due`` (``SKIP LOCKED``, oldest due first, up to N), then ``stamp`` on each row
  the caller takes and its own save. For callers that decide per row (the outbox engine,
  ``claim.py``: its kinds skip up-to-date rows and build what they will send).
* **One statement, nothing read first**: ``take`` (a named row, if free: a conditional
  UPDATE; the sync's pull) and ``take_due`` (up to N due rows, oldest first, through the
  due column's index: ``id = ANY(ARRAY(SELECT … FOR UPDATE SKIP LOCKED LIMIT n))`` on
  Postgres; the sync's fan-out).
* **While held**: ``extend`` (renew, and write progress in the same UPDATE), ``holding``
  (the row locked only if still held: record only while held), ``held_by``.
* **Give back**: ``release`` (unrecorded: free at once), ``clear`` (on a row the caller
  holds locked and saves: its outcome recorded), ``release_lapsed`` (staff's retry).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

from django.db import connections, router, transaction
from django.db.models import F, Field, Model, Q, QuerySet
from django.db.models.functions import Greatest

M = TypeVar("M", bound=Model)

TOKEN = "claim_token"
UNTIL = "lease_until"


def token_new() -> str:
    return secrets.token_hex(16)


def unclaimed(now: datetime) -> Q:
    """Rows nobody holds: never claimed (or given back), or their lease ran out."""
    # The token and the lease are written together; a token without a lease (rows of
    # older code) holds nothing either.
    return Q(claim_token="") | Q(lease_until__isnull=True) | Q(lease_until__lt=now)


def held(now: datetime) -> Q:
    """Rows held by a live lease."""
    return ~Q(claim_token="") & Q(lease_until__gt=now)


def is_held(row: Any, now: datetime) -> bool:
    return bool(row.claim_token and row.lease_until and row.lease_until > now)


def held_by(row: Any, token: str) -> bool:
    return bool(token) and row.claim_token == token


# --- lock, decide, stamp -----------------------------------------------------------------


def lock_named(rows: QuerySet[M], *, wait: bool = True) -> list[M]:
    """``rows`` locked for the caller's transaction, by id (``wait=False``: rows another
    transaction has locked are left out instead of waited for)."""
    return list(rows.select_for_update(skip_locked=not wait).order_by("id"))


def lock_due(rows: QuerySet[M], *, now: datetime, limit: int, order_by: Sequence[str]) -> list[M]:
    """Up to ``limit`` of ``rows`` (the caller's due filter) that nobody holds, locked
    with ``SKIP LOCKED``: takers side by side never wait on each other."""
    free = rows.filter(unclaimed(now)).select_for_update(skip_locked=True)
    return list(free.order_by(*order_by)[:limit])


def stamp(row: Any, *, token: str, until: datetime) -> None:
    """Take a row the caller holds locked (it saves it in the same transaction)."""
    row.claim_token = token
    row.lease_until = until


def clear(row: Any) -> None:
    """Give back a row the caller holds locked (it saves it in the same transaction)."""
    row.claim_token = ""
    row.lease_until = None


# --- one statement -----------------------------------------------------------------------


def take(rows: QuerySet[Any], *, token: str, until: datetime, now: datetime, **also: Any) -> int:
    """Take the rows of ``rows`` nobody holds (a conditional UPDATE, no lock held after
    it), writing ``also`` with the claim. Returns how many were taken."""
    return rows.filter(unclaimed(now)).update(claim_token=token, lease_until=until, **also)


def take_due(
    model: type[Model],
    *,
    due_field: str,
    due_by: datetime,
    until: datetime,
    now: datetime,
    limit: int,
    returning: str = "id",
    token: str | None = None,
    also: dict[str, Any] | None = None,
) -> list[Any]:
    """Take up to ``limit`` rows due by ``due_by`` (``due_field``), oldest due first, in one
    statement; returns their ``returning`` column. Rows another taker has locked are
    skipped. ``also``: more columns to write.

    With ``token`` the rows get the claim until ``until`` (rows held are passed over).
    Without, the due time itself becomes the lease: it moves to ``until``, so the row is
    not due until then and due again unless its work reschedules it first (the sync's
    fan-out: a pull's message is out; a lost one is sent again when the lease ends).

    The select walks ``due_field``'s index from its oldest entry and stops at the LIMIT,
    so it reads the due rows, never the table. ``id = ANY(ARRAY(…))`` keeps the outer
    UPDATE on the primary key: with ``id IN (…)`` the planner may hash the sub-select and
    scan the whole table (docs/benchmarks.md, "P9 after the sync layer").
    """
    connection = connections[router.db_for_write(model)]
    writes = {due_field: until} if token is None else {TOKEN: token, UNTIL: until}
    writes.update(also or {})
    sql = _take_due_sql(
        model,
        due_field,
        tuple(writes),
        returning,
        token is not None,
        connection.vendor == "postgresql",
    )
    # Values as ``save()`` would write them (SQLite keeps date-times as text).
    params = [
        _field(model, name).get_db_prep_save(value, connection) for name, value in writes.items()
    ]
    due = _field(model, due_field)
    params.append(due.get_db_prep_save(due_by, connection))
    if token is not None:
        params.append(_field(model, UNTIL).get_db_prep_save(now, connection))
    params.append(limit)
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Walk the index in order, never a bitmap of it: the due rows are the oldest
            # few, so the planner often expects ~10 and picks a bitmap scan and a sort.
            # That reads every index entry up to the due time, dead ones included (rows
            # whose due time moved on and vacuum has not reached), and a bitmap scan never
            # marks them dead: at 100 000 schedules it re-read 7 750 entries and 1 278
            # pages a tick for 250 due. An ordered index scan stops at the LIMIT and
            # marks the dead entries it passes, so the next tick skips them.
            cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def _field(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)
    assert isinstance(field, Field), f"{model.__name__}.{name} is not a column"
    return field


@cache
def _take_due_sql(
    model: type[Model],
    due_field: str,
    writes: tuple[str, ...],
    returning: str,
    claimed: bool,
    postgres: bool,
) -> str:
    quote = connections[router.db_for_write(model)].ops.quote_name

    def column(name: str) -> str:
        return quote(_field(model, name).get_attname_column()[1] or name)

    table, pk = quote(model._meta.db_table), column(model._meta.pk.name)
    due = column(due_field)
    sets = ", ".join(f"{column(name)} = %s" for name in writes)
    until = column(UNTIL)
    free = f" AND ({column(TOKEN)} = '' OR {until} IS NULL OR {until} < %s)" if claimed else ""
    select = (
        # Names from the model's own meta, quoted; every value is a parameter.
        f"SELECT {pk} FROM {table} WHERE {due} IS NOT NULL AND {due} <= %s{free} "  # noqa: S608
        f"ORDER BY {due} LIMIT %s"
    )
    # SQLite (development): no row locks, and its writers are serialized anyway.
    chosen = f"= ANY(ARRAY({select} FOR UPDATE SKIP LOCKED))" if postgres else f"IN ({select})"
    return f"UPDATE {table} SET {sets} WHERE {pk} {chosen} RETURNING {column(returning)}"  # noqa: S608


# --- while held --------------------------------------------------------------------------


def extend(rows: QuerySet[Any], *, token: str, until: datetime, **also: Any) -> bool:
    """Renew the lease of ``rows`` held by ``token``, writing ``also`` (progress) in the
    same UPDATE; False once the lease is lost (nothing is written then)."""
    return bool(rows.filter(claim_token=token).update(lease_until=until, **also))


@contextmanager
def holding(rows: QuerySet[M], *, token: str) -> Iterator[M | None]:
    """A transaction with the row of ``rows`` locked if ``token`` still holds it (else
    ``None``): progress is recorded only by the holder whose lease was not taken over."""
    with transaction.atomic():
        yield rows.select_for_update().filter(claim_token=token).first() if token else None


# --- give back ---------------------------------------------------------------------------


def release(rows: QuerySet[Any], *, token: str, attempted: bool = True) -> int:
    """Give back the rows of ``rows`` held by ``token``, unrecorded: free at once, not
    after the lease. ``attempted=False``: nothing was sent, the claim's attempt is taken
    back (rows with an ``attempts`` count)."""
    fields: dict[str, Any] = {"claim_token": "", "lease_until": None}
    if not attempted:
        fields["attempts"] = Greatest(F("attempts") - 1, 0)
    return rows.filter(claim_token=token).update(**fields)


def release_lapsed(rows: QuerySet[Any], *, now: datetime) -> int:
    """Free the rows of ``rows`` whose lease ran out (a live one is left to its holder)."""
    return rows.filter(Q(lease_until__lt=now) | Q(lease_until__isnull=True)).update(
        claim_token="", lease_until=None
    )
