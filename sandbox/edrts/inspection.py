"""What the control API and the page read of EDRTS: jobs, stats, and per product its
``mp_*`` fields with who set them last (``edrts`` when the value is the one EDRTS set,
else ``import``) and when EDRTS last set each (received → processed, wall-clock)."""

from datetime import datetime
from typing import Any

from django.db.models import Count, Q, Sum

from sandbox.common.api_php import rate_limits
from sandbox.edrts import state
from sandbox.edrts.endpoint import GROUP
from sandbox.edrts.models import EdrtsFieldStamp, EdrtsJob
from sandbox.records.databases.models import CatalogDatabase, CatalogRow

MP_PREFIX = "mp_"


def _iso(moment: object) -> str | None:
    return moment.isoformat() if moment is not None else None  # type: ignore[attr-defined]


def job_json(job: EdrtsJob) -> dict:
    return {
        "id": job.id,
        "db_id": job.db_id,
        "correlation_id": job.correlation_id,
        "batch_index": job.batch_index,
        "kind": job.kind,
        "status": job.status,
        "records": job.record_count,
        "api_user": job.username,
        "token_name": job.token_name,
        "marketplace": job.marketplace,
        "received_at": _iso(job.received_at),
        "processed_at": _iso(job.processed_at),
        "processing_seconds": (
            round((job.processed_at - job.received_at).total_seconds(), 3)
            if job.processed_at is not None
            else None
        ),
        "created": job.created,
        "updated": job.updated,
        "deleted": job.deleted,
        "errors": job.errors,
    }


def stats(db_id: int | None = None) -> dict:
    jobs = EdrtsJob.objects.all() if db_id is None else EdrtsJob.objects.filter(db_id=db_id)
    totals = jobs.aggregate(
        **{s: Count("id", filter=Q(status=s)) for s, _ in EdrtsJob.STATUSES},
        records=Sum("record_count"),
        records_processed=Sum("record_count", filter=Q(status=EdrtsJob.PROCESSED)),
        created=Sum("created"),
        updated=Sum("updated"),
        deleted=Sum("deleted"),
    )
    job_counts = {s: totals[s] for s, _ in EdrtsJob.STATUSES}
    sums = {
        k: totals[k] or 0 for k in ("records", "records_processed", "created", "updated", "deleted")
    }
    answer = {"jobs": job_counts, **sums}
    if db_id is None:
        answer["requests"] = state.counters()
    return answer


def state_json() -> dict:
    return {
        "base_path": "/catalog/rest.php",
        "settings": state.settings_snapshot(),
        "rate_limit": rate_limits.snapshot()[GROUP],
        "stats": stats(),
    }


def products_json(
    *, db: CatalogDatabase, page: int, per_page: int, edrts_only: bool, key: str | None
) -> dict:
    rows = CatalogRow.objects.filter(db=db)
    if key is not None:
        rows = rows.filter(key=key)
    if edrts_only:
        stamped = EdrtsFieldStamp.objects.filter(db=db).values("key")
        rows = rows.filter(key__in=stamped)
    total = rows.count()
    chosen = list(rows.order_by("id").only("key", "data")[(page - 1) * per_page : page * per_page])
    stamps: dict[str, dict[str, dict[str, Any]]] = {}
    for found in EdrtsFieldStamp.objects.filter(db=db, key__in=[r.key for r in chosen]).values(
        "key", "field", "value", "received_at", "set_at", "job__correlation_id", "job__batch_index"
    ):
        stamps.setdefault(found["key"], {})[found["field"]] = dict(found)
    mp_fields = [f for f in db.fields if f.startswith(MP_PREFIX)]
    products = []
    for row in chosen:
        own = stamps.get(row.key, {})
        fields = {}
        for field in [*mp_fields, *(f for f in own if f not in mp_fields)]:
            value = str(row.data.get(field, ""))
            stamp = own.get(field)
            if stamp is not None and stamp["value"] == value:
                source = "edrts"
            else:
                source = "import" if value else ""
            fields[field] = {
                "value": value,
                "source": source,
                "edrts": None
                if stamp is None
                else {
                    "value": stamp["value"],
                    "received_at": _iso(stamp["received_at"]),
                    "set_at": _iso(stamp["set_at"]),
                    "correlation_id": stamp["job__correlation_id"],
                    "batch_index": stamp["job__batch_index"],
                },
            }
        products.append({"id": row.key, "fields": fields})
    return {
        "db_id": db.id,
        "page": page,
        "per_page": per_page,
        "total": total,
        "products": products,
    }


def stamps_json(
    *, db_id: int | None, field: str | None, since: datetime | None, limit: int
) -> dict:
    """``{"count", "stamps": [{"db_id", "id", "field", "value", "received_at", "set_at",
    "correlation_id", "batch_index"}]}`` in the order set (oldest first)."""
    rows = EdrtsFieldStamp.objects.all()
    if db_id is not None:
        rows = rows.filter(db_id=db_id)
    if field is not None:
        rows = rows.filter(field=field)
    if since is not None:
        rows = rows.filter(set_at__gt=since)
    chosen = rows.order_by("set_at", "id").values_list(
        "db_id",
        "key",
        "field",
        "value",
        "received_at",
        "set_at",
        "job__correlation_id",
        "job__batch_index",
    )[:limit]
    found = [
        {
            "db_id": db,
            "id": key,
            "field": name,
            "value": value,
            "received_at": _iso(received),
            "set_at": _iso(set_at),
            "correlation_id": correlation_id,
            "batch_index": batch_index,
        }
        for db, key, name, value, received, set_at, correlation_id, batch_index in chosen
    ]
    return {"count": len(found), "stamps": found}
