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

from django.db import transaction
from django.utils import timezone

from sandbox.common import clock, violations
from sandbox.common.loop import loop_start
from sandbox.edrts import state
from sandbox.edrts.models import EdrtsFieldStamp, EdrtsJob
from sandbox.platform_api.catalog.models import CatalogDatabase, CatalogRow

log = logging.getLogger(__name__)
IDLE_PAUSE_SECONDS = 0.05
FAILED_MESSAGE = "Batch failed (sandbox fault): nothing was applied"
NOT_FOUND_MESSAGE = "No product with this id"


def _apply_update(job: EdrtsJob, db: CatalogDatabase, processed_at: object) -> None:
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
    CatalogRow.objects.bulk_update(list(changed.values()), ["data", "updated_at"], batch_size=500)
    for row in created:
        row.updated_at = now
    CatalogRow.objects.bulk_create(created, batch_size=500)
    EdrtsFieldStamp.objects.bulk_create(
        [
            EdrtsFieldStamp(
                db=db,
                key=key,
                field=field,
                value=value,
                received_at=job.received_at,
                set_at=processed_at,
                job=job,
            )
            for (key, field), value in stamps.items()
        ],
        update_conflicts=True,
        unique_fields=["db", "key", "field"],
        update_fields=["value", "received_at", "set_at", "job"],
        batch_size=500,
    )
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
    job = (
        EdrtsJob.objects.filter(status=EdrtsJob.QUEUED, due_at__lte=timezone.now())
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
