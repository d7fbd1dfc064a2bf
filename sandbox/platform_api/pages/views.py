"""HTML pages of the Authentication and Platform APIs: users, tokens and accounts; the
outbox; a database's rows (paged, joined columns included) and its imports; an export with
its settings and runs; one run with its logs and a look at its file. Plain pages on the
sandbox's one local stylesheet."""

import gzip
import io
import zipfile
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from sandbox.common import clock
from sandbox.common.api_php import rate_limits
from sandbox.common.api_php.errors import ApiError
from sandbox.common.pages import db_sections
from sandbox.platform_api.exports.models import Export, ExportRun
from sandbox.platform_api.exports.records import export_json
from sandbox.platform_api.exports.runs import run_in_background, run_start
from sandbox.platform_api.imports import runs as import_runs
from sandbox.platform_api.imports.models import Import
from sandbox.platform_api.imports.pages import imports_with_last_log
from sandbox.records.api_users.models import OutboxEmail, PlatformAccount, PlatformUser
from sandbox.records.databases.models import CatalogDatabase

ROWS_PER_PAGE = 50
PREVIEW_BYTES = 20_000


def overview(request: HttpRequest) -> HttpResponse:
    accounts = PlatformAccount.objects.prefetch_related("dbs__exports", "dbs__imports").order_by(
        "id"
    )
    return render(
        request,
        "sandbox_platform/overview.html",
        {
            "now": clock.now().isoformat(timespec="seconds"),
            "users": PlatformUser.objects.prefetch_related("accounts", "tokens").order_by("id"),
            "accounts": [
                {
                    "account": a,
                    "dbs": [
                        {
                            "db": db,
                            "rows": db.rows.count(),
                            "exports": db.exports.all(),
                            "imports": db.imports.all(),
                        }
                        for db in a.dbs.all()
                    ],
                }
                for a in accounts
            ],
            "limits": rate_limits.snapshot(),
            "outbox_count": OutboxEmail.objects.count(),
        },
    )


def outbox_page(request: HttpRequest) -> HttpResponse:
    emails = OutboxEmail.objects.order_by("-id")[:100]
    return render(request, "sandbox_platform/outbox.html", {"emails": emails})


def _imported_fields(db: CatalogDatabase) -> list[str]:
    """The fields this database's imports write (their file maps' targets, join keys
    aside): the marketplace's columns, for the listing-status import."""
    written: list[str] = []
    for source in Import.objects.filter(db=db).order_by("id"):
        join_key = source.settings.get("join_key", "")
        for target in ((source.file_map or {}).get("maps") or {}).values():
            if target != join_key and target in db.fields and target not in written:
                written.append(target)
    return written


def db_page(request: HttpRequest, db_id: int) -> HttpResponse:
    db = get_object_or_404(CatalogDatabase.objects.select_related("account"), id=db_id)
    page = Paginator(db.rows.order_by("id"), ROWS_PER_PAGE).get_page(request.GET.get("page"))
    imported = _imported_fields(db)
    # The imported columns come right after the first (the row's key) unless asked for the
    # database's own order: at the far right of a wide table nobody finds them.
    imported_first = bool(imported) and request.GET.get("columns") != "db"
    if imported_first:
        others = [f for f in db.fields if f not in imported]
        fields = [*others[:1], *imported, *others[1:]]
    else:
        fields = list(db.fields)
    columns = [{"name": f, "imported": f in imported} for f in fields]
    rows = [
        [{"value": row.data.get(c["name"], ""), "imported": c["imported"]} for c in columns]
        for row in page.object_list
    ]
    keep = "&columns=db" if imported and not imported_first else ""
    return render(
        request,
        "sandbox_platform/db.html",
        {
            "db": db,
            "page": page,
            "columns": columns,
            "rows": rows,
            "imported": imported,
            "imported_first": imported_first,
            "keep": keep,
            "exports": db.exports.order_by("id"),
            "imports": imports_with_last_log(db=db),
            # What other rooms show of this database (EDRTS jobs and fields).
            "sections": db_sections(request, db.id),
            "note": request.GET.get("note"),
            # An import run from this page: its log is fetched when the run ends.
            "watch": int(watch) if (watch := request.GET.get("watch", "")).isdigit() else None,
        },
    )


@require_POST
def import_run_post(request: HttpRequest, import_id: int) -> HttpResponse:
    """Run an import now, as its schedule would (for a person playing the seller)."""
    source = get_object_or_404(Import, id=import_id)
    try:
        import_runs.run_start(source=source)
    except ApiError as exc:
        note = exc.message
    else:
        import_runs.run_in_background(source=source)
        note = f"import {source.id} started: its log appears below when it ends"
    url = reverse("sandbox_platform_db", args=[source.db_id])
    return HttpResponseRedirect(f"{url}?{urlencode({'note': note, 'watch': source.id})}#imports")


def export_page(request: HttpRequest, export_id: int) -> HttpResponse:
    export = get_object_or_404(Export.objects.select_related("db__account"), id=export_id)
    data = export_json(export)
    settings = [
        (k, v) for k, v in data.items() if k not in ("export_fields", "last_log", "password")
    ]
    return render(
        request,
        "sandbox_platform/export.html",
        {
            "export": export,
            "data": data,
            "settings": settings,
            "fields": export.fields.all(),
            "runs": export.runs.order_by("-id")[:50],
            "note": request.GET.get("note"),
        },
    )


@require_POST
def export_run_post(request: HttpRequest, export_id: int) -> HttpResponse:
    export = get_object_or_404(Export, id=export_id)
    try:
        run = run_start(export=export, trigger="page")
    except ApiError as exc:
        note = exc.message
    else:
        run_in_background(run=run)
        note = f"run {run.id} started"
    url = reverse("sandbox_platform_export", args=[export.id])
    return HttpResponseRedirect(f"{url}?note={note}")


def _preview(run: ExportRun) -> str:
    if run.file is None:
        return ""
    data = bytes(run.file)
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        elif data[:2] == b"PK":
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                data = archive.read(archive.namelist()[0])
    except (OSError, zipfile.BadZipFile, IndexError):
        return "(the file could not be unpacked for a preview)"
    text = data[:PREVIEW_BYTES].decode("utf-8", errors="replace")
    return text + ("\n… (preview cut)" if len(data) > PREVIEW_BYTES else "")


def run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(ExportRun.objects.select_related("export__db"), id=run_id)
    return render(
        request,
        "sandbox_platform/run.html",
        {"run": run, "logs": run.logs.order_by("id"), "preview": _preview(run)},
    )
