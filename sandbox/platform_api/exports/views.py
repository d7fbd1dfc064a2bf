"""Views of the Platform API's exports under /api.php/dbs/{db_id}/exports (thin)."""

from django.http import HttpRequest, HttpResponse

from sandbox.common.api_php.endpoint import strings_response
from sandbox.common.json_bodies import json_object_body
from sandbox.platform_api.endpoint import platform_endpoint
from sandbox.platform_api.exports.models import Export
from sandbox.platform_api.exports.records import (
    export_add,
    export_for_db,
    export_json,
    export_schedule,
    export_update,
)
from sandbox.platform_api.exports.runs import run_in_background, run_start
from sandbox.records.api_users.models import PlatformUser
from sandbox.records.databases.access import db_for_user


@platform_endpoint(group="exports", methods=("GET", "POST"))
def exports_collection(request: HttpRequest, user: PlatformUser, db_id: str) -> HttpResponse:
    db = db_for_user(user=user, db_id=db_id)
    if request.method == "GET":
        exports = Export.objects.filter(db=db).prefetch_related("fields").order_by("id")
        return strings_response([export_json(e) for e in exports])
    return strings_response(export_json(export_add(db=db, body=json_object_body(request))))


@platform_endpoint(group="exports", methods=("GET", "PUT", "DELETE"))
def export_detail(
    request: HttpRequest, user: PlatformUser, db_id: str, export_id: str
) -> HttpResponse:
    export = export_for_db(db=db_for_user(user=user, db_id=db_id), export_id=export_id)
    if request.method == "DELETE":
        export.delete()
        return strings_response({})
    if request.method == "PUT":
        export = export_update(export=export, body=json_object_body(request))
    return strings_response(export_json(export))


@platform_endpoint(group="exports", methods=("PUT",))
def export_schedule_view(
    request: HttpRequest, user: PlatformUser, db_id: str, export_id: str
) -> HttpResponse:
    export = export_for_db(db=db_for_user(user=user, db_id=db_id), export_id=export_id)
    return strings_response(export_schedule(export=export, body=json_object_body(request)))


@platform_endpoint(group="exports", methods=("POST",))
def export_run_view(
    request: HttpRequest, user: PlatformUser, db_id: str, export_id: str
) -> HttpResponse:
    export = export_for_db(db=db_for_user(user=user, db_id=db_id), export_id=export_id)
    run = run_start(export=export, trigger="api")
    run_in_background(run=run)
    return strings_response(
        {"status": "success", "message": f"Export {export.id} started (run {run.id})"}, 202
    )
