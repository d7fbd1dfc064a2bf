"""Control API of exports (/sandbox/api, local only): run one now (synchronously), read
its runs, logs and files."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404

from sandbox.common.api_php.control import platform_control
from sandbox.platform_api.exports.models import Export, ExportRun
from sandbox.platform_api.exports.records import export_json
from sandbox.platform_api.exports.runs import run_execute, run_json, run_start


@platform_control(("POST",))
def export_run_now(request: HttpRequest, export_id: int) -> JsonResponse:
    """Run now and answer when it is over (delivery retries included)."""
    export = get_object_or_404(Export, id=export_id)
    run = run_start(export=export, trigger="control")
    return JsonResponse(run_json(run_execute(run_id=run.id)))


@platform_control(("GET",))
def export_view(request: HttpRequest, export_id: int) -> JsonResponse:
    export = get_object_or_404(Export, id=export_id)
    runs = export.runs.order_by("-id")[:20]
    return JsonResponse({"export": export_json(export), "runs": [run_json(r) for r in runs]})


@platform_control(("GET",))
def export_run_view(request: HttpRequest, run_id: int) -> JsonResponse:
    return JsonResponse(run_json(get_object_or_404(ExportRun, id=run_id)))


def export_run_file(request: HttpRequest, run_id: int) -> HttpResponse:
    """The file exactly as written (404 once an older run's file was dropped)."""
    run = get_object_or_404(ExportRun, id=run_id)
    if run.file is None:
        return HttpResponse("this run's file is no longer kept", status=404)
    response = HttpResponse(
        bytes(run.file), content_type=run.content_type or "application/octet-stream"
    )
    response["Content-Disposition"] = f'attachment; filename="{run.file_name or "export"}"'
    return response
