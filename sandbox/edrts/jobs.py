"""Queueing a request's batches and the answers about them: the two shapes of a ``PUT``/
``DELETE`` answer's ``data`` (reading A and B of ``edrts_answer``) and the job endpoint's."""

import uuid
from typing import Any

from django.db import transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from sandbox.common import switches
from sandbox.edrts import state
from sandbox.edrts.models import EdrtsJob
from sandbox.records.api_users.models import PlatformUser
from sandbox.records.databases.models import CatalogDatabase


def _iso(moment: object) -> str | None:
    return moment.isoformat() if moment is not None else None  # type: ignore[attr-defined]


@transaction.atomic
def jobs_queue(
    *, request: HttpRequest, db: CatalogDatabase, user: PlatformUser, kind: str, items: list
) -> list[EdrtsJob]:
    """One job per batch of at most ``batch_records`` items, one correlation id for all."""
    settings = state.settings_snapshot()
    size = max(1, int(settings["batch_records"]))
    received = timezone.now()
    token = getattr(request, "platform_token", None)
    correlation_id = uuid.uuid4().hex
    jobs = [
        EdrtsJob(
            db=db,
            correlation_id=correlation_id,
            batch_index=index,
            kind=kind,
            payload=items[start : start + size],
            record_count=len(items[start : start + size]),
            user=user,
            username=user.username,
            token_name=token.name if token is not None else "",
            marketplace=db.owner_id != user.id,
            request_id=getattr(request, "sandbox_request_id", ""),
            received_at=received,
        )
        for index, start in enumerate(range(0, len(items), size))
    ]
    return EdrtsJob.objects.bulk_create(jobs)


def details_url(request: HttpRequest, job: EdrtsJob) -> str:
    """``…/catalog/rest.php/db/{db_id}/{id}``: two segments after ``db`` (the reference,
    ``…/edrts-put``), the job's own id."""
    path = reverse("edrts_job", args=[str(job.db_id), str(job.id)])
    return request.build_absolute_uri(path)


def accepted_data(
    *, request: HttpRequest, db: CatalogDatabase, jobs: list[EdrtsJob], count: int
) -> dict:
    """The ``data`` of a success answer: reading A ``{"sku_count", "batches"}``, B
    ``{"requests_in_queue", "last_processed_job"}``."""
    if not switches.reading_b("edrts_answer"):
        return {
            "sku_count": count,
            "batches": [
                {
                    "db_id": str(db.id),
                    "correlation_id": job.correlation_id,
                    "batch_index": job.batch_index,
                }
                for job in jobs
            ],
        }
    queued = EdrtsJob.objects.filter(db=db, status=EdrtsJob.QUEUED).count()
    last = (
        EdrtsJob.objects.filter(db=db, processed_at__isnull=False)
        .exclude(status=EdrtsJob.LOST)
        .defer("payload")
        .order_by("-processed_at", "-id")
        .first()
    )
    return {
        "requests_in_queue": queued,
        "last_processed_job": None if last is None else _processed_json(request, last),
    }


def _processed_json(request: HttpRequest, job: EdrtsJob) -> dict[str, Any]:
    processed_at = job.processed_at
    assert processed_at is not None  # the status lists processed jobs only
    return {
        "id": str(job.id),
        "received_timestamp": _iso(job.received_at),
        "processed_timestamp": _iso(processed_at),
        "processing_time": round((processed_at - job.received_at).total_seconds(), 3),
        "details_url": details_url(request, job),
    }


def job_answer(job: EdrtsJob) -> dict:
    """The job endpoint's answer (a lost job is never answered: the view says 404)."""
    return {
        "status": job.status,
        "processed_timestamp": _iso(job.processed_at),
        "records": job.record_count,
        "errors": job.errors,
    }


def jobs_answer(jobs: list[EdrtsJob]) -> dict:
    """The job endpoint's answer for the batches of one request (one job: its own answer):
    ``failed`` if any failed, else ``queued`` while any waits, else ``processed``."""
    if len(jobs) == 1:
        return job_answer(jobs[0])
    statuses = {job.status for job in jobs}
    status = EdrtsJob.PROCESSED
    if EdrtsJob.FAILED in statuses:
        status = EdrtsJob.FAILED
    elif EdrtsJob.QUEUED in statuses:
        status = EdrtsJob.QUEUED
    done = [job.processed_at for job in jobs if job.processed_at is not None]
    return {
        "status": status,
        "processed_timestamp": _iso(max(done)) if len(done) == len(jobs) else None,
        "records": sum(job.record_count for job in jobs),
        "errors": [error for job in jobs for error in job.errors],
    }
