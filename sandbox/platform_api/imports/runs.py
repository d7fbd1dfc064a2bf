"""Import runs: fetch the file over HTTP (retried), read it as the file map says, and write
the mapped columns into the database's rows in batches.

A ``join_info`` run matches each record's join-key value to the rows whose ``join_key``
field holds it and writes the other mapped columns into them (fields the database lacks are
added); a record matching no row is counted unmatched, never guessed. A ``product_feed``
run creates a row per record, or updates the matching rows when the import has a
``join_key``. A record of the wrong width, or with bytes the encoding cannot decode, is a
bad line: counted and skipped. Only a failed download is retried; the rows are written in
one transaction once the whole file is in (a download that breaks off writes nothing).
"""

import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from django.db import close_old_connections, connection, transaction
from django.db.models.fields.json import KeyTransform

from sandbox.common import clock
from sandbox.common.api_php.errors import ApiError
from sandbox.common.model_fields import column_of, concrete_field
from sandbox.platform_api.imports.fetch import (
    FetchError,
    UnreadableFile,
    file_downloaded,
    records_of,
    undecodable,
)
from sandbox.platform_api.imports.file_map import positions_of
from sandbox.platform_api.imports.models import Import, ImportLog
from sandbox.platform_api.imports.settings import dialect_of
from sandbox.records.databases.models import CatalogDatabase, CatalogRow

log = logging.getLogger(__name__)

CHUNK = 2000  # records read, matched and written together
WRITE_BATCH = 500
BAD_LINES_NAMED = 5
_executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="sandbox-import")
# Pauses between attempts end early on reset (tests must not wait out a long retry).
_stop = threading.Event()


class RunRefused(Exception):
    """The file cannot be read as mapped (no retry helps: the map or the file is wrong)."""


@dataclass
class Counts:
    rows: int = 0
    matched: int = 0
    unmatched: int = 0
    bad_lines: int = 0
    created: int = 0
    bad_line_numbers: list[int] = field(default_factory=list)


def run_start(*, source: Import) -> Import:
    """Mark the import running (409 while another run is going)."""
    now = clock.now()
    claimed = Import.objects.filter(id=source.id, running=False).update(
        running=True, status="running", last_run_at=now
    )
    if not claimed:
        raise ApiError("Import is already running", 409)
    return Import.objects.select_related("db").get(id=source.id)


def run_in_background(*, source: Import) -> None:
    _executor.submit(_run_thread, source.id)


def _run_thread(import_id: int) -> None:
    try:
        run_execute(import_id=import_id)
    except Exception:
        log.exception("import %s run crashed", import_id)
    finally:
        close_old_connections()


def _log(source: Import, message: str, *, error: bool, counts: Counts | None = None) -> None:
    numbers = {k: v for k, v in asdict(counts).items() if k != "bad_line_numbers"} if counts else {}
    ImportLog.objects.create(
        source=source, message=message, time=clock.now(), error_flag=error, **numbers
    )


def _fields_add(db: CatalogDatabase, targets: list[str]) -> list[str]:
    fields = list(db.fields) + [t for t in targets if t not in db.fields]
    if fields != db.fields:
        CatalogDatabase.objects.filter(id=db.id).update(fields=fields)
        db.fields = fields
    return fields


class _Writer:
    """Applies chunks of mapped records to the database's rows."""

    def __init__(self, *, source: Import, fields: list[str], counts: Counts) -> None:
        self.db_id = source.db_id
        self.join_key = source.settings["join_key"]
        self.creates = source.settings["join_type"] == "product_feed"
        self.fields = fields
        self.counts = counts

    def _found(self, keys: set[str]) -> dict[str, list[CatalogRow]]:
        rows = CatalogRow.objects.filter(db_id=self.db_id)
        if self.join_key == "id":
            rows = rows.filter(key__in=keys)  # the (db, key) index
        else:
            rows = rows.annotate(join_value=KeyTransform(self.join_key, "data")).filter(
                join_value__in=keys
            )
        found: dict[str, list[CatalogRow]] = {}
        for row in rows:
            found.setdefault(row.data.get(self.join_key, ""), []).append(row)
        return found

    def _new(self, values: dict[str, str]) -> CatalogRow:
        data = {f: values.get(f, "") for f in self.fields}
        return CatalogRow(db_id=self.db_id, key=data.get("id", ""), data=data)

    def write(self, chunk: list[dict[str, str]]) -> None:
        now = clock.now()
        keys = {v[self.join_key] for v in chunk if v.get(self.join_key)} if self.join_key else set()
        found = self._found(keys) if keys else {}
        changed: dict[int, CatalogRow] = {}
        created: list[CatalogRow] = []
        for values in chunk:
            key = values.get(self.join_key, "") if self.join_key else ""
            rows = found.get(key) if key else None
            if rows:
                for row in rows:
                    row.data = {**row.data, **values}
                    row.key = row.data.get("id", "")
                    if row.pk is not None:
                        changed[row.pk] = row
                self.counts.matched += 1
            elif self.creates:
                row = self._new(values)
                created.append(row)
                if key:
                    found[key] = [row]  # a later record with that key updates it
                self.counts.created += 1
            else:
                self.counts.unmatched += 1
        for row in [*changed.values(), *created]:
            row.updated_at = now
        _rows_update(list(changed.values()))
        CatalogRow.objects.bulk_create(created, batch_size=WRITE_BATCH)


def _rows_update(rows: list[CatalogRow]) -> None:
    """One prepared UPDATE run for every changed row (``executemany``): Django's
    ``bulk_update`` spends seconds building CASE expressions for a few thousand rows."""
    if not rows:
        return
    meta, quote = CatalogRow._meta, connection.ops.quote_name
    columns = ("data", "key", "updated_at")
    fields = [concrete_field(CatalogRow, name) for name in columns]
    sets = ", ".join(f"{quote(column_of(CatalogRow, name))} = %s" for name in columns)
    pk = column_of(CatalogRow, "id")
    sql = f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {quote(pk)} = %s"  # noqa: S608 - names from the model
    params = [
        [f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields] + [row.pk]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _apply(source: Import, records: Iterator[list[str] | None]) -> Counts:
    """Write a downloaded file's records; RunRefused when it cannot be read as mapped."""
    file_map = source.file_map
    assert file_map is not None  # _run refuses a run without one
    counts = Counts()
    header = next(records, None)
    if not header:
        raise RunRefused("the file is empty or its first line cannot be read")
    entries = [(name, name, target) for name, target in file_map["maps"].items()]
    try:
        positions = positions_of(
            entries=entries,
            header=header,
            name_based=file_map["name_based_maps"] == "1",
            clean=file_map["clean_file_headers"] == "1",
        )
    except ApiError as exc:
        raise RunRefused(exc.message.removeprefix("maps: ")) from exc
    width = len(header)
    with transaction.atomic():
        fields = _fields_add(source.db, list(positions))
        writer = _Writer(source=source, fields=fields, counts=counts)
        chunk: list[dict[str, str]] = []
        number = 1  # the header
        for record in records:
            number += 1
            if record == []:
                continue  # a blank line is no record
            counts.rows += 1
            if record is None or len(record) != width or undecodable(record):
                counts.bad_lines += 1
                if len(counts.bad_line_numbers) < BAD_LINES_NAMED:
                    counts.bad_line_numbers.append(number)
                continue
            chunk.append({target: record[i] for target, i in positions.items()})
            if len(chunk) >= CHUNK:
                writer.write(chunk)
                chunk = []
        writer.write(chunk)
        CatalogDatabase.objects.filter(id=source.db_id).update(updated_at=clock.now())
    return counts


def _summary_message(counts: Counts, attempt: int, attempts: int) -> str:
    bad = f"{counts.bad_lines} bad lines"
    if counts.bad_line_numbers:
        more = ", ..." if counts.bad_lines > len(counts.bad_line_numbers) else ""
        bad += f" (records {', '.join(map(str, counts.bad_line_numbers))}{more})"
    return (
        f"Import done: {counts.rows} rows, {counts.matched} matched, {counts.unmatched} "
        f"unmatched, {counts.created} created, {bad} (attempt {attempt} of {attempts})"
    )


def _finish(source: Import, *, ok: bool, message: str, counts: Counts) -> dict:
    _log(source, message, error=not ok, counts=counts)
    status = "success" if ok else "failed"
    changes: dict = {"running": False, "status": status}
    if ok:
        changes["last_download_time"] = clock.now()
    Import.objects.filter(id=source.id).update(**changes)
    return {
        "import_id": source.id,
        "status": status,
        "rows": counts.rows,
        "matched": counts.matched,
        "unmatched": counts.unmatched,
        "bad_lines": counts.bad_lines,
        "created": counts.created,
        "error_flag": 0 if ok else 1,
        "message": message,
    }


def run_execute(*, import_id: int, pause_seconds: float | None = None) -> dict:
    """Do one started run to the end (the control API calls this synchronously); the run
    summary. ``pause_seconds`` replaces ``time_between_attempts`` (control runs only)."""
    source = Import.objects.select_related("db").get(id=import_id)
    try:
        return _run(source, pause_seconds)
    except Exception as exc:  # never leave the import marked running
        log.exception("import %s: run failed", source.id)
        message = f"Import failed: {exc.__class__.__name__}: {exc}"
        return _finish(source, ok=False, message=message, counts=Counts())


def _run(source: Import, pause_seconds: float | None) -> dict:
    settings = source.settings
    if not source.delimiters or not source.file_map:
        message = "Import failed: set the delimiters and the file map first"
        return _finish(source, ok=False, message=message, counts=Counts())
    attempts = int(settings["max_attempts"])
    pause = float(settings["time_between_attempts"]) if pause_seconds is None else pause_seconds
    url, reason = settings["url"], ""
    dialect = dialect_of(source.delimiters)
    for attempt in range(1, attempts + 1):
        try:
            with file_downloaded(settings=settings) as body:
                counts = _apply(source, records_of(body, dialect))
        except (RunRefused, UnreadableFile) as exc:
            message = f"Import failed: {exc}"
            return _finish(source, ok=False, message=message, counts=Counts())
        except FetchError as exc:
            reason = str(exc)
            _log(
                source, f"Attempt {attempt} of {attempts} to fetch {url} failed: {exc}", error=True
            )
            if attempt < attempts and _stop.wait(pause):
                break
            continue
        return _finish(
            source, ok=True, message=_summary_message(counts, attempt, attempts), counts=counts
        )
    message = f"Import failed: could not fetch {url} after {attempts} attempt(s): {reason}"
    return _finish(source, ok=False, message=message, counts=Counts())


def waits_interrupt() -> None:
    """Cut short the pauses of runs in progress (reset); later runs pause again."""
    _stop.set()
    time.sleep(0.05)
    _stop.clear()
