"""Control API of imports (/sandbox/api, local only): run one now (synchronously), read it
with its logs."""

from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404

from sandbox.common.api_php.control import platform_control
from sandbox.common.json_bodies import BadBody, json_object_body
from sandbox.platform_api.imports.models import Import, ImportLog
from sandbox.platform_api.imports.records import import_json, platform_time
from sandbox.platform_api.imports.runs import run_execute, run_start

LOGS_SHOWN = 50


def log_control_json(log: ImportLog) -> dict:
    return {
        "id": log.id,
        "message": log.message,
        "time": platform_time(log.time),
        "error_flag": log.error_flag,
        "rows": log.rows,
        "matched": log.matched,
        "unmatched": log.unmatched,
        "bad_lines": log.bad_lines,
        "created": log.created,
    }


@platform_control(("POST",))
def import_run_now(request: HttpRequest, import_id: int) -> JsonResponse:
    """Run now and answer when it is over (fetch retries included). ``pause_seconds``
    replaces the import's ``time_between_attempts`` for this run (tests skip the wait)."""
    source = get_object_or_404(Import, id=import_id)
    body = json_object_body(request, allow_empty=True)
    pause = body.get("pause_seconds")
    if pause is not None and (
        isinstance(pause, bool) or not isinstance(pause, int | float) or pause < 0
    ):
        raise BadBody("pause_seconds must be a number >= 0")
    run_start(source=source)
    return JsonResponse(run_execute(import_id=source.id, pause_seconds=pause))


@platform_control(("GET",))
def import_view(request: HttpRequest, import_id: int) -> JsonResponse:
    source = get_object_or_404(Import, id=import_id)
    logs = source.logs.order_by("-id")[:LOGS_SHOWN]
    return JsonResponse(
        {
            "import": import_json(source, as_answered=False),
            "logs": [log_control_json(g) for g in logs],
        }
    )
