"""Views of the Platform API's imports under /api.php/dbs/{db_id}/imports (thin)."""

from django.http import HttpRequest, HttpResponse

from sandbox.common.api_php.endpoint import strings_response
from sandbox.common.json_bodies import json_object_body
from sandbox.platform_api.endpoint import platform_endpoint
from sandbox.platform_api.imports.models import Import
from sandbox.platform_api.imports.records import (
    import_add,
    import_delimiters,
    import_file_map,
    import_for_db,
    import_json,
    import_schedule,
    import_update,
)
from sandbox.records.api_users.models import PlatformUser
from sandbox.records.databases.access import db_for_user


@platform_endpoint(group="imports", methods=("GET", "POST"))
def imports_collection(request: HttpRequest, user: PlatformUser, db_id: str) -> HttpResponse:
    db = db_for_user(user=user, db_id=db_id)
    if request.method == "GET":
        return strings_response([import_json(i) for i in Import.objects.filter(db=db)])
    return strings_response(import_json(import_add(db=db, body=json_object_body(request))))


@platform_endpoint(group="imports", methods=("GET",))
def imports_auto_detected(request: HttpRequest, user: PlatformUser, db_id: str) -> HttpResponse:
    """Our choice: the sandbox detects no imports from sample files; always ``[]``."""
    db_for_user(user=user, db_id=db_id)
    return strings_response([])


@platform_endpoint(group="imports", methods=("GET", "POST", "DELETE"))
def import_detail(
    request: HttpRequest, user: PlatformUser, db_id: str, import_id: str
) -> HttpResponse:
    source = import_for_db(db=db_for_user(user=user, db_id=db_id), import_id=import_id)
    if request.method == "DELETE":
        source.delete()
        return strings_response({})
    if request.method == "POST":
        source = import_update(source=source, body=json_object_body(request))
    return strings_response(import_json(source))


@platform_endpoint(group="imports", methods=("PUT",))
def import_schedule_view(
    request: HttpRequest, user: PlatformUser, db_id: str, import_id: str
) -> HttpResponse:
    source = import_for_db(db=db_for_user(user=user, db_id=db_id), import_id=import_id)
    return strings_response(import_schedule(source=source, body=json_object_body(request)))


@platform_endpoint(group="imports", methods=("PUT",))
def import_delimiters_view(
    request: HttpRequest, user: PlatformUser, db_id: str, import_id: str
) -> HttpResponse:
    source = import_for_db(db=db_for_user(user=user, db_id=db_id), import_id=import_id)
    source = import_delimiters(source=source, body=json_object_body(request))
    return strings_response(import_json(source))


@platform_endpoint(group="imports", methods=("PUT",))
def import_file_map_view(
    request: HttpRequest, user: PlatformUser, db_id: str, import_id: str
) -> HttpResponse:
    source = import_for_db(db=db_for_user(user=user, db_id=db_id), import_id=import_id)
    return strings_response(import_file_map(source=source, body=json_object_body(request)))
