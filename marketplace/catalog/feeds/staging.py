"""Applying a feed's validated rows set-based: a staging table, then a few statements.

The rows (accepted and rejected, with their line) go into a temporary staging table —
Postgres: ``COPY`` through psycopg 3's ``cursor.copy()``, streamed with bounded memory;
SQLite (the embedded default): ``executemany`` in chunks. Then, in the caller's
transaction: later rows of a SKU are marked duplicates (the first valid row wins, decided
by the file alone); one merge (``INSERT … ON CONFLICT DO UPDATE … WHERE`` something
changed, in SKU order) writes only the listings that change and counts created / updated
/ unchanged; the rejected SKUs are kept in one statement; a full feed deactivates the
listings it did not carry in one ``UPDATE``. Plain INSERT/UPDATE/DELETE on the listing
tables: triggers and other writers see ordinary row changes.
"""

# Every name put into SQL here is a constant of this module or comes from the models;
# every value is a parameter.
# ruff: noqa: S608

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection

from marketplace.catalog.feeds.mapping import LISTING_COLUMNS
from marketplace.catalog.models import Listing, RejectedSku

STAGE = "catalog_feed_stage"
SQLITE_CHUNK = 2000
REJECTIONS_KEPT = 200
_NUMERIC = {"price", "sale_price"}
# What a row sets on its listing: every listing column but the key, then the record id
# (the SKU as the file held it, "" when the same: ``Listing.record_id``).
CONTENT_COLUMNS = (*(column for column in LISTING_COLUMNS if column != "sku"), "record_id")
STAGE_COLUMNS = ("sku", *CONTENT_COLUMNS)
# A rejected row's content: nothing but its record id, written last.
REJECTED_BLANK = (None,) * (len(CONTENT_COLUMNS) - 1)


@dataclass
class StageCounts:
    accepted: int = 0  # valid rows written to the stage (duplicates included)
    rejected: int = 0  # rows rejected by the row rules
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicates: int = 0
    deactivated: int = 0
    rejections: list[dict[str, Any]] = field(default_factory=list)


def _drop_stage(cursor: Any) -> None:
    # Qualified: only ever the temporary table, never a real one of that name.
    schema = "pg_temp" if connection.vendor == "postgresql" else "temp"
    cursor.execute(f"DROP TABLE IF EXISTS {schema}.{STAGE}")


def _quoted(name: str) -> str:
    return connection.ops.quote_name(name)


def stage_create(cursor: Any) -> None:
    """The staging table of this transaction (dropped first: a test's outer transaction
    may still hold the previous run's)."""
    numeric = "numeric" if connection.vendor == "postgresql" else "decimal"
    columns = ", ".join(
        f"{name} {numeric if name in _NUMERIC else 'integer' if name == 'quantity' else 'text'}"
        for name in STAGE_COLUMNS
    )
    _drop_stage(cursor)
    if connection.vendor == "postgresql":
        # For this transaction only: the merge's sort and the hash joins over a million
        # staged rows stay in memory instead of spilling to disk (4 MB by default).
        cursor.execute("SELECT set_config('work_mem', %s, true)", [settings.FEED_INGEST_WORK_MEM])
    on_commit = " ON COMMIT DROP" if connection.vendor == "postgresql" else ""
    cursor.execute(
        f"CREATE TEMPORARY TABLE {STAGE} (line integer, reason text, {columns}){on_commit}"
    )


@contextmanager
def stage_writer(cursor: Any) -> Iterator[Callable[[tuple[Any, ...]], None]]:
    """``write((line, reason, sku, title, …, record_id))`` for each row; flushed on exit."""
    names = ", ".join(("line", "reason", *STAGE_COLUMNS))
    if connection.vendor == "postgresql":
        with cursor.cursor.copy(f"COPY {STAGE} ({names}) FROM STDIN") as copy:
            yield copy.write_row
        return
    marks = ", ".join(["%s"] * (2 + len(STAGE_COLUMNS)))
    sql = f"INSERT INTO {STAGE} ({names}) VALUES ({marks})"
    pending: list[tuple[Any, ...]] = []

    def write(row: tuple[Any, ...]) -> None:
        pending.append(row)
        if len(pending) >= SQLITE_CHUNK:
            cursor.executemany(sql, pending)
            pending.clear()

    yield write
    if pending:
        cursor.executemany(sql, pending)


def stage_duplicates_mark(cursor: Any) -> int:
    """Later valid rows of a SKU are rejected as duplicates of its first row, whatever
    became of that one (a rejected first row is not replaced by a later one: the file's
    first word on a SKU decides); returns how many."""
    # No ANALYZE of the stage: it cost ~1 s a run here, and the plans without it (hash
    # aggregate, hash anti-joins) are the ones wanted anyway.
    cursor.execute(
        f"""UPDATE {STAGE} SET reason = 'duplicate sku: already on line '
                || CAST(firsts.line AS text) || ' of this feed'
            FROM (SELECT sku, MIN(line) AS line FROM {STAGE} WHERE sku <> ''
                  GROUP BY sku HAVING COUNT(*) > 1) AS firsts
            WHERE {STAGE}.sku = firsts.sku AND {STAGE}.reason IS NULL
              AND {STAGE}.line > firsts.line"""
    )
    changed: int = cursor.rowcount
    return max(changed, 0)


def stage_rejections(cursor: Any) -> list[dict[str, Any]]:
    """The first REJECTIONS_KEPT rejected rows, in file order, for the run's page."""
    cursor.execute(
        f"SELECT line, sku, reason FROM {STAGE} WHERE reason IS NOT NULL "
        f"ORDER BY line LIMIT {REJECTIONS_KEPT}"
    )
    return [
        {"line": line, "sku": (sku or "")[:128], "reason": reason[:300]}
        for line, sku, reason in cursor.fetchall()
    ]


def _changed(old: str, new: str) -> str:
    """SQL true when a listing's content differs from the row's (NULL-safe), or it is
    inactive."""
    distinct = "IS DISTINCT FROM" if connection.vendor == "postgresql" else "IS NOT"
    return " OR ".join(
        [f"NOT {old}.active"]
        + [f"{old}.{_quoted(name)} {distinct} {new}.{_quoted(name)}" for name in CONTENT_COLUMNS]
    )


def stage_merge(cursor: Any, *, seller_id: int, run_id: int, now: datetime) -> tuple[int, int]:
    """One upsert of the valid rows into the listings, writing only those that change (in
    SKU order, so two writers of one seller can never deadlock on them); returns
    (created, updated)."""
    table = Listing._meta.db_table
    content = ", ".join(_quoted(name) for name in CONTENT_COLUMNS)
    assign = ", ".join(f"{_quoted(name)} = excluded.{_quoted(name)}" for name in CONTENT_COLUMNS)
    stamp = connection.ops.adapt_datetimefield_value(now)
    # status_at moves only with the status (created, or reactivated): a content-only edit
    # changes no status, records no change, and so must not change the status's time.
    insert = f"""INSERT INTO {table} AS cur
            (seller_id, sku, {content}, active, last_run_id, created_at, updated_at, status_at)
        SELECT %s, sku, {content}, TRUE, %s, %s, %s, %s FROM {STAGE}
        WHERE reason IS NULL ORDER BY sku
        ON CONFLICT (seller_id, sku) DO UPDATE SET {assign}, active = TRUE,
            last_run_id = excluded.last_run_id, updated_at = excluded.updated_at,
            status_at = CASE WHEN cur.active THEN cur.status_at ELSE excluded.status_at END
        WHERE {_changed("cur", "excluded")}"""
    params = [seller_id, run_id, stamp, stamp, stamp]
    if connection.vendor == "postgresql":
        # xmax is 0 on a row version this statement inserted, set on one it updated.
        cursor.execute(
            f"""WITH merged AS ({insert} RETURNING (xmax = 0) AS created)
                SELECT COUNT(*) FILTER (WHERE created), COUNT(*) FILTER (WHERE NOT created)
                FROM merged""",
            params,
        )
        created, updated = cursor.fetchone()
        return int(created), int(updated)
    # SQLite has no xmax: count first (same transaction, the seller's ingest runs alone).
    cursor.execute(
        f"""SELECT COALESCE(SUM(CASE WHEN cur.id IS NULL THEN 1 ELSE 0 END), 0),
                   COALESCE(SUM(CASE WHEN cur.id IS NOT NULL AND ({_changed("cur", "src")})
                                THEN 1 ELSE 0 END), 0)
            FROM {STAGE} AS src LEFT JOIN {table} AS cur
              ON cur.seller_id = %s AND cur.sku = src.sku
            WHERE src.reason IS NULL""",
        [seller_id],
    )
    created, updated = cursor.fetchone()
    cursor.execute(insert, params)
    return int(created), int(updated)


def stage_rejected_keep(
    cursor: Any,
    *,
    seller_id: int,
    run_id: int,
    full_feed: bool,
    now: datetime,
    any_rejected: bool = True,
) -> None:
    """Keep every rejected SKU with its reason (its first row speaks: later ones are its
    duplicates) but those a valid row of the file carries; forget the SKUs accepted now,
    and after a full feed those it no longer carries. A rejection's time moves only when
    its reason (or record id) changes; a listing whose rejection is lifted gets the time of
    this run as its status time (the status changed now). ``any_rejected`` False (the
    stage holds no rejected row) skips the insert, which would find nothing."""
    table = RejectedSku._meta.db_table
    kept = True
    if not full_feed:  # forgetting reads the whole stage: only when there is one to forget
        cursor.execute(f"SELECT 1 FROM {table} WHERE seller_id = %s LIMIT 1", [seller_id])
        kept = cursor.fetchone() is not None
    if any_rejected:
        cursor.execute(
            f"""INSERT INTO {table} AS cur (seller_id, sku, record_id, reason, run_id, updated_at)
                SELECT %s, s.sku, COALESCE(s.record_id, ''), s.reason, %s, %s FROM {STAGE} AS s
                WHERE s.reason IS NOT NULL AND s.sku <> ''
                  AND NOT EXISTS (SELECT 1 FROM {STAGE} AS a
                                  WHERE a.reason IS NULL AND a.sku = s.sku)
                  AND NOT EXISTS (SELECT 1 FROM {STAGE} AS b
                                  WHERE b.reason IS NOT NULL AND b.sku = s.sku
                                    AND b.line < s.line)
                ORDER BY s.sku
                ON CONFLICT (seller_id, sku) DO UPDATE SET reason = excluded.reason,
                    record_id = excluded.record_id, run_id = excluded.run_id,
                    updated_at = CASE
                        WHEN cur.reason = excluded.reason AND cur.record_id = excluded.record_id
                        THEN cur.updated_at ELSE excluded.updated_at END""",
            [seller_id, run_id, connection.ops.adapt_datetimefield_value(now)],
        )
    if full_feed:
        lifted = "seller_id = %s AND run_id <> %s"
        params: list[Any] = [seller_id, run_id]
    elif kept:  # read before the insert: a rejection it added is never one to forget
        lifted = f"seller_id = %s AND sku IN (SELECT sku FROM {STAGE} WHERE reason IS NULL)"
        params = [seller_id]
    else:
        return
    # The listings' status time first (no trigger fires on it): the delete's trigger then
    # records their status with this run's time.
    cursor.execute(
        f"""UPDATE {Listing._meta.db_table} SET status_at = %s
            WHERE seller_id = %s AND sku IN (SELECT sku FROM {table} WHERE {lifted})""",
        [connection.ops.adapt_datetimefield_value(now), seller_id, *params],
    )
    cursor.execute(f"DELETE FROM {table} WHERE {lifted}", params)


def listings_active_count(cursor: Any, *, seller_id: int) -> int:
    cursor.execute(
        f"SELECT COUNT(*) FROM {Listing._meta.db_table} WHERE seller_id = %s AND active",
        [seller_id],
    )
    return int(cursor.fetchone()[0])


def stage_deactivate_missing(cursor: Any, *, seller_id: int, now: datetime) -> int:
    """A full feed: deactivate the seller's active listings no row of the file names (a
    rejected row names its SKU too: its listing stays as it was); returns how many."""
    table = Listing._meta.db_table
    cursor.execute(
        f"""UPDATE {table} SET active = FALSE, updated_at = %s, status_at = %s
            WHERE seller_id = %s AND active
              AND NOT EXISTS (SELECT 1 FROM {STAGE} AS s WHERE s.sku = {table}.sku)""",
        [connection.ops.adapt_datetimefield_value(now)] * 2 + [seller_id],
    )
    changed: int = cursor.rowcount
    return max(changed, 0)


def stage_drop(cursor: Any) -> None:
    _drop_stage(cursor)
