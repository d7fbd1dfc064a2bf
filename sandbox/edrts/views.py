"""The EDRTS API under its base path (``/catalog/rest.php``): ``PUT``/``DELETE
/db/{db_id}`` queue batches, ``GET /db/{db_id}/{correlation_id}/{batch_index}`` answers a
batch's outcome."""

from django.http import HttpRequest, JsonResponse

from sandbox.auth_api.models import PlatformUser
from sandbox.common.api_php.errors import ApiError
from sandbox.edrts.bodies import ids_read, records_read
from sandbox.edrts.endpoint import edrts_endpoint
from sandbox.edrts.jobs import accepted_data, job_answer, jobs_queue
from sandbox.edrts.models import EdrtsJob
from sandbox.platform_api.catalog.access import db_for_user


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
def job_detail(
    request: HttpRequest, user: PlatformUser, db_id: str, correlation_id: str, batch_index: str
) -> JsonResponse:
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
