"""The EDRTS worker: one ``common.loop`` thread in the server process applies queued
batches in the order received, each no sooner than the processing delay after it arrived.

An update sets only the fields a record names (``""`` clears one), adds fields the
database lacks (after its own), creates a product for an unknown id (counted as
``edrts_marketplace_created_product`` when the caller is not the database's owner) and
stamps every field it set with the batch's received and processed times. A delete removes
the products with those ids (an unknown id is an error of the batch). A fault switch may
fail or lose the batch (``state``): nothing is applied then.
"""

import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

from sandbox.common import clock, violations
from sandbox.common.loop import loop_start
from sandbox.common.model_fields import concrete_field
from sandbox.edrts import state
from sandbox.edrts.models import EdrtsFieldStamp, EdrtsJob
from sandbox.records.databases.models import CatalogDatabase, CatalogRow

log = logging.getLogger(__name__)
IDLE_PAUSE_SECONDS = 0.05
FAILED_MESSAGE = "Batch failed (sandbox fault): nothing was applied"
NOT_FOUND_MESSAGE = "No product with this id"
CHUNK = 500  # rows a statement (7 parameters each: well under SQLite's 32 766)


def _prep(model: type[Model], field: str, value: object) -> Any:
    return concrete_field(model, field).get_db_prep_save(value, connection)


def _chunks(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _rows_save(rows: list[CatalogRow], now: datetime) -> None:
    """One UPDATE per 500 rows from a VALUES list (SQLite and Postgres both take it; the
    ORM's ``bulk_update`` builds a CASE per row, and one statement per row is slow on
    Postgres)."""
    table = CatalogRow._meta.db_table
    stamp = _prep(CatalogRow, "updated_at", now)
    with connection.cursor() as cursor:
        for chunk in _chunks(rows, CHUNK):
            values = ", ".join(["(%s, %s)"] * len(chunk))
            params: list[Any] = []
            for row in chunk:
                params += [row.pk, _prep(CatalogRow, "data", row.data)]
            cursor.execute(
                f"WITH v(id, data) AS (VALUES {values}) "  # noqa: S608
                f"UPDATE {table} SET data = (SELECT v.data FROM v WHERE v.id = {table}.id), "
                f"updated_at = %s WHERE id IN (SELECT v.id FROM v)",
                [*params, stamp],
            )


def _stamps_save(
    job: EdrtsJob, db: CatalogDatabase, stamps: dict[tuple[str, str], str], set_at: datetime
) -> None:
    """Upsert the stamps, 500 a statement (SQLite and Postgres both take ``ON CONFLICT …
    DO UPDATE``)."""
    table = EdrtsFieldStamp._meta.db_table
    received = _prep(EdrtsFieldStamp, "received_at", job.received_at)
    processed = _prep(EdrtsFieldStamp, "set_at", set_at)
    key, field = connection.ops.quote_name("key"), connection.ops.quote_name("field")
    with connection.cursor() as cursor:
        for chunk in _chunks(list(stamps.items()), CHUNK):
            values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(chunk))
            params: list[Any] = []
            for (product, name), value in chunk:
                params += [db.id, product, name, value, received, processed, job.id]
            cursor.execute(
                f"INSERT INTO {table} (db_id, {key}, {field}, value, received_at, set_at, job_id) "  # noqa: S608
                f"VALUES {values} ON CONFLICT (db_id, {key}, {field}) DO UPDATE SET "
                "value = excluded.value, received_at = excluded.received_at, "
                "set_at = excluded.set_at, job_id = excluded.job_id",
                params,
            )


def _apply_update(job: EdrtsJob, db: CatalogDatabase, processed_at: datetime) -> None:
    records: list[dict[str, str]] = job.payload
    # In first-seen order, after the database's own (as an import adds its targets).
    new_fields = [f for r in records for f in r if f not in db.fields]
    if new_fields:
        db.fields = [*db.fields, *dict.fromkeys(new_fields)]
    keys = list(dict.fromkeys(r["id"] for r in records))
    found: dict[str, list[CatalogRow]] = {}
    for row in CatalogRow.objects.filter(db=db, key__in=keys):
        found.setdefault(row.key, []).append(row)
    now = clock.now()
    created: list[CatalogRow] = []
    changed: dict[int, CatalogRow] = {}
    stamps: dict[tuple[str, str], str] = {}
    updated = 0
    for record in records:
        key = record["id"]
        values = {f: v for f, v in record.items() if f != "id"}
        rows = found.get(key)
        if rows is None:
            row = CatalogRow(db=db, key=key, data={**dict.fromkeys(db.fields, ""), "id": key})
            rows = found[key] = [row]
            created.append(row)
            if job.marketplace:
                violations.violation_record(
                    kind=violations.EDRTS_MARKETPLACE_CREATED_PRODUCT,
                    seller=job.username,
                    client_id=f"api-user:{job.username}",
                    request_id=job.request_id,
                    detail=(
                        f"PUT /db/{db.id}: id {key!r} was not in the database; a product "
                        f"was created (batch {job.correlation_id}/{job.batch_index})"
                    ),
                )
        else:
            updated += 1
        for row in rows:
            row.data = {**row.data, **values}
            row.updated_at = now
            if row.pk is not None:
                changed[row.pk] = row
        for field, value in values.items():
            stamps[(key, field)] = value
    _rows_save(list(changed.values()), now)
    for row in created:
        row.updated_at = now
    CatalogRow.objects.bulk_create(created, batch_size=500)
    _stamps_save(job, db, stamps, processed_at)
    job.created, job.updated = len(created), updated
    CatalogDatabase.objects.filter(id=db.id).update(fields=db.fields, updated_at=now)


def _apply_delete(job: EdrtsJob, db: CatalogDatabase) -> None:
    ids: list[str] = job.payload
    present = set(
        CatalogRow.objects.filter(db=db, key__in=ids).values_list("key", flat=True).distinct()
    )
    deleted, _ = CatalogRow.objects.filter(db=db, key__in=list(present)).delete()
    EdrtsFieldStamp.objects.filter(db=db, key__in=list(present)).delete()
    job.deleted = deleted
    job.errors = [
        {"id": key, "message": NOT_FOUND_MESSAGE}
        for key in dict.fromkeys(ids)
        if key not in present
    ]
    CatalogDatabase.objects.filter(id=db.id).update(updated_at=clock.now())


def job_process(job: EdrtsJob) -> None:
    with transaction.atomic():
        db = CatalogDatabase.objects.select_for_update().get(id=job.db_id)
        fault = state.take_fault()
        processed_at = timezone.now()
        if fault == "fail":
            job.status = EdrtsJob.FAILED
            ids = job.payload if job.kind == EdrtsJob.DELETE else [r["id"] for r in job.payload]
            job.errors = [{"id": key, "message": FAILED_MESSAGE} for key in ids]
        elif fault == "lose":
            job.status = EdrtsJob.LOST
        else:
            if job.kind == EdrtsJob.DELETE:
                _apply_delete(job, db)
            else:
                _apply_update(job, db, processed_at)
            job.status = EdrtsJob.PROCESSED
        job.processed_at = processed_at
        job.save(
            update_fields=["status", "processed_at", "errors", "created", "updated", "deleted"]
        )


def tick() -> bool:
    """Process the oldest due batch; True when there was one (the loop goes on at once)."""
    delay = timedelta(seconds=float(state.settings_snapshot()["delay_seconds"]))
    job = (
        EdrtsJob.objects.filter(status=EdrtsJob.QUEUED, received_at__lte=timezone.now() - delay)
        .order_by("id")
        .first()
    )
    if job is None:
        return False
    try:
        job_process(job)
    except Exception:
        log.exception("EDRTS batch %s/%s failed", job.correlation_id, job.batch_index)
        EdrtsJob.objects.filter(id=job.id).update(
            status=EdrtsJob.FAILED,
            processed_at=timezone.now(),
            errors=[{"id": "", "message": "The batch could not be processed"}],
        )
    return True


def worker_start() -> None:
    loop_start("sandbox-edrts-worker", tick, pause_seconds=IDLE_PAUSE_SECONDS, again_if_busy=True)
