"""Export runs: write the file, keep it, deliver it over HTTP with retries, log the outcome.

Delivery (issue 12's pinned decision): ``protocol`` ``http``/``https`` PUTs the file to
``host`` + ``/`` + ``file_name`` (``host`` itself under reading B of
``export_delivery_url``) with HTTP Basic from ``username``/``password`` and the
format's Content-Type; any 2xx is delivered. Each attempt waits at most ``timeout``
seconds; ``max_attempts`` attempts, ``time_between_attempts`` seconds apart. Every failed
attempt and the outcome are logged; the last log is the export's ``last_log``
(``error_flag`` ``1`` when the run failed). ``protocol`` empty: the file is written and
kept, not delivered.
"""

import logging
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests
from django.db import close_old_connections, transaction

from sandbox.common import clock, switches
from sandbox.common.api_php.errors import ApiError
from sandbox.platform_api.exports.models import Export, ExportLog, ExportRun
from sandbox.platform_api.exports.writer import ExportFile, export_file
from sandbox.records.databases.models import CatalogRow

log = logging.getLogger(__name__)

KEEP_FILES = 10  # per export: older runs keep their log, not their file
_executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="sandbox-export")
# Pauses between attempts end early on reset (tests must not wait out a long retry).
_stop = threading.Event()


def _log(export_id: int, run: ExportRun, message: str, *, error: bool) -> None:
    ExportLog.objects.create(
        export_id=export_id, run=run, message=message, time=clock.now(), error_flag=error
    )


def run_start(*, export: Export, trigger: str) -> ExportRun:
    """Mark the export running and record the run (409 while another run is going)."""
    with transaction.atomic():
        claimed = Export.objects.filter(id=export.id, running=False).update(
            running=True, status="running"
        )
        if not claimed:
            raise ApiError("Export is already running", 409)
        settings = Export.objects.get(id=export.id).settings
        settings["_worker"] = {"pid": str(os.getpid()), "hostname": socket.gethostname()}
        Export.objects.filter(id=export.id).update(settings=settings)
        return ExportRun.objects.create(export=export, trigger=trigger, started_at=clock.now())


def run_in_background(*, run: ExportRun) -> None:
    _executor.submit(_run_thread, run.id)


def _run_thread(run_id: int) -> None:
    try:
        run_execute(run_id=run_id)
    except Exception:
        log.exception("export run %s crashed", run_id)
    finally:
        close_old_connections()


def _write(export: Export) -> ExportFile:
    fields = [(f.field_name, f.export_field_name) for f in export.fields.all()]
    rows = (
        r.data for r in CatalogRow.objects.filter(db_id=export.db_id).order_by("id").iterator(2000)
    )
    return export_file(
        settings=export.settings, fields=fields, rows=rows, db_fields=export.db.fields
    )


def _put(url: str, written: ExportFile, settings: dict) -> str | None:
    """None when delivered, else why not."""
    auth = None
    if settings["username"] or settings["password"]:
        auth = (settings["username"], settings["password"])
    try:
        response = requests.put(
            url,
            data=written.content,
            headers={"Content-Type": written.content_type},
            auth=auth,
            timeout=float(settings["timeout"]),
        )
    except requests.Timeout:
        return f"no answer within {settings['timeout']} s (timeout)"
    except requests.RequestException as exc:
        return f"could not connect: {exc.__class__.__name__}"
    if 200 <= response.status_code < 300:
        return None
    return f"HTTP {response.status_code} {response.text[:200]!r}"


def delivery_url(settings: dict) -> str:
    """``host`` + ``/`` + ``file_name`` (reading A of ``export_delivery_url``), or ``host``
    itself (reading B)."""
    if switches.reading_b("export_delivery_url"):
        return settings["host"]
    return settings["host"].rstrip("/") + "/" + settings["file_name"]


def _deliver(export: Export, run: ExportRun, written: ExportFile) -> tuple[bool, str]:
    settings = export.settings
    url = delivery_url(settings)
    attempts = int(settings["max_attempts"])
    pause = float(settings["time_between_attempts"])
    reason = ""
    for attempt in range(1, attempts + 1):
        ExportRun.objects.filter(id=run.id).update(attempts=attempt, delivered_to=url)
        problem = _put(url, written, settings)
        if problem is None:
            return True, (
                f"Export delivered: {written.rows} rows, {len(written.content)} bytes to {url} "
                f"(attempt {attempt} of {attempts})"
            )
        reason = problem
        _log(
            export.id,
            run,
            f"Attempt {attempt} of {attempts} to {url} failed: {problem}",
            error=True,
        )
        if attempt < attempts and _stop.wait(pause):
            break
    return False, f"Export failed: not delivered to {url} after {attempts} attempt(s): {reason}"


def _finish(export_id: int, run: ExportRun, *, ok: bool, message: str) -> None:
    now = clock.now()
    status = "success" if ok else "failed"
    ExportRun.objects.filter(id=run.id).update(status=status, finished_at=now, error_flag=not ok)
    _log(export_id, run, message, error=not ok)
    Export.objects.filter(id=export_id).update(running=False, status=status)
    stale = ExportRun.objects.filter(export_id=export_id).order_by("-id")[KEEP_FILES:]
    ExportRun.objects.filter(id__in=list(stale.values_list("id", flat=True))).update(file=None)


def run_execute(*, run_id: int) -> ExportRun:
    """Do one recorded run to the end (the control API calls this synchronously)."""
    run = ExportRun.objects.select_related("export__db").get(id=run_id)
    export = run.export
    try:
        written = _write(export)
    except Exception as exc:  # a setting the writer cannot honour: the run fails, logged
        log.exception("export %s: writing failed", export.id)
        _finish(export.id, run, ok=False, message=f"Export failed: the file was not written: {exc}")
        return ExportRun.objects.get(id=run.id)
    settings = export.settings
    ExportRun.objects.filter(id=run.id).update(
        rows=written.rows,
        file=written.content,
        file_size=len(written.content),
        file_name=settings["file_name"],
        content_type=written.content_type,
    )
    threshold = int(settings["threshold"])
    if written.rows < threshold:
        message = (
            f"Export failed: {written.rows} rows is below the threshold of {threshold}; "
            "not delivered"
        )
        _finish(export.id, run, ok=False, message=message)
    elif settings["protocol"] in ("http", "https"):
        needs_name = not switches.reading_b("export_delivery_url")
        if not settings["host"] or (needs_name and not settings["file_name"]):
            needed = "host and file_name" if needs_name else "host"
            _finish(export.id, run, ok=False, message=f"Export failed: {needed} needed")
        else:
            ok, message = _deliver(export, run, written)
            _finish(export.id, run, ok=ok, message=message)
    else:
        message = (
            f"Export written: {written.rows} rows, {len(written.content)} bytes "
            "(no protocol: kept, not delivered)"
        )
        _finish(export.id, run, ok=True, message=message)
    return ExportRun.objects.get(id=run.id)


def waits_interrupt() -> None:
    """Cut short the pauses of runs in progress (reset); later runs pause again."""
    _stop.set()
    time.sleep(0.05)
    _stop.clear()


def run_json(run: ExportRun) -> dict:
    return {
        "id": run.id,
        "export_id": run.export_id,
        "trigger": run.trigger,
        "status": run.status,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "rows": run.rows,
        "file_name": run.file_name,
        "content_type": run.content_type,
        "file_size": run.file_size,
        "file_kept": run.file is not None,
        "delivered_to": run.delivered_to,
        "attempts": run.attempts,
        "error_flag": run.error_flag,
        "logs": [
            {"message": lg.message, "time": lg.time.isoformat(), "error_flag": lg.error_flag}
            for lg in run.logs.order_by("id")
        ],
    }
