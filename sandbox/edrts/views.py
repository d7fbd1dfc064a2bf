"""The EDRTS API under its base path (``/catalog/rest.php``): ``PUT``/``DELETE
/db/{db_id}`` queue batches, ``GET /db/{db_id}/{id}`` answers a job's outcome (by the id
of its ``details_url`` or by the request's correlation id), and under reading B of
``edrts_job_path`` the older ``GET /db/{db_id}/{correlation_id}/{batch_index}`` too."""

from django.http import HttpRequest, JsonResponse

from sandbox.common import switches
from sandbox.common.api_php.errors import ApiError
from sandbox.edrts.bodies import ids_read, records_read
from sandbox.edrts.endpoint import edrts_endpoint
from sandbox.edrts.jobs import accepted_data, job_answer, jobs_answer, jobs_queue
from sandbox.edrts.models import EdrtsJob
from sandbox.records.api_users.models import PlatformUser
from sandbox.records.databases.access import db_for_user


@edrts_endpoint(methods=("PUT", "DELETE"))
def db_records(request: HttpRequest, user: PlatformUser, db_id: str) -> JsonResponse:
    db = db_for_user(user=user, db_id=db_id)
    if request.method == "PUT":
        items: list = records_read(request, user=user)
        kind = EdrtsJob.UPDATE
    else:
        items = ids_read(request)
        kind = EdrtsJob.DELETE
    jobs = jobs_queue(request=request, db=db, user=user, kind=kind, items=items)
    data = accepted_data(request=request, db=db, jobs=jobs, count=len(items))
    return JsonResponse({"status": "success", "data": data})


@edrts_endpoint(methods=("GET",))
def job_detail(request: HttpRequest, user: PlatformUser, db_id: str, key: str) -> JsonResponse:
    """``GET /db/{db_id}/{id}``: a job by the id its ``details_url`` names, or by the
    request's correlation id (every batch of that request: ``jobs_answer``)."""
    db = db_for_user(user=user, db_id=db_id)
    jobs = list(
        EdrtsJob.objects.filter(db=db, correlation_id=key)
        .exclude(status=EdrtsJob.LOST)
        .defer("payload")
        .order_by("batch_index")
    )
    if not jobs and key.isdigit():
        jobs = list(
            EdrtsJob.objects.filter(db=db, id=int(key))
            .exclude(status=EdrtsJob.LOST)
            .defer("payload")
        )
    if not jobs:
        raise ApiError("Job not found", 404)
    return JsonResponse(jobs_answer(jobs))


@edrts_endpoint(methods=("GET",))
def batch_detail(
    request: HttpRequest, user: PlatformUser, db_id: str, correlation_id: str, batch_index: str
) -> JsonResponse:
    """The older ``GET /db/{db_id}/{correlation_id}/{batch_index}`` (reading B only)."""
    if not switches.reading_b("edrts_job_path"):
        raise ApiError("Not found: a job is read at /db/{db_id}/{id}", 404)
    db = db_for_user(user=user, db_id=db_id)
    job = (
        EdrtsJob.objects.filter(db=db, correlation_id=correlation_id, batch_index=int(batch_index))
        .defer("payload")
        .first()
        if batch_index.isdigit()
        else None
    )
    if job is None or job.status == EdrtsJob.LOST:
        raise ApiError("Job not found", 404)
    return JsonResponse(job_answer(job))
