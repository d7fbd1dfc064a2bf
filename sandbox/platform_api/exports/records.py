"""Exports as records: add, update, delete, schedule, and the Export object answered."""

from datetime import datetime

from django.db import transaction

from sandbox.common import clock
from sandbox.common.api_php.errors import ApiError
from sandbox.common.log_times import log_time
from sandbox.common.schedule import schedule_set
from sandbox.platform_api.exports.models import Export, ExportField, ExportLog
from sandbox.platform_api.exports.settings import (
    export_fields_parse,
    settings_merge,
    xml_names_check,
)
from sandbox.records.databases.models import CatalogDatabase


def _rfc3339(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds") if moment else None


def log_json(log: ExportLog | None) -> dict | None:
    if log is None:
        return None
    return {
        "id": str(log.id),
        "export_id": str(log.export_id),
        "message": log.message,
        "time": log_time(log.time),
        "error_flag": "1" if log.error_flag else "0",
    }


def export_json(export: Export) -> dict:
    """The Export object: the interface's fields (strings but for arrays, objects and the
    nulls it names), plus ``status`` and ``last_log`` (issue 12's pinned decision)."""
    s = export.settings
    fields = {
        f"field{i}": {
            "id": str(f.id),
            "export_id": str(export.id),
            "field_name": f.field_name,
            "export_field_name": f.export_field_name,
            "sort_order": str(f.sort_order),
        }
        for i, f in enumerate(export.fields.all(), start=1)
    }
    worker = export.settings.get("_worker") if export.running else None
    return {
        "id": str(export.id),
        "db_id": str(export.db_id),
        "name": s["name"],
        "file_name": s["file_name"],
        "protocol": s["protocol"],
        "protocol_info": s["protocol_info"],
        "host": s["host"],
        "username": s["username"],
        "password": s["password"],
        "ftp_url": s["ftp_url"],
        "cron": export.cron,
        "next_run_time": _rfc3339(export.next_run_time),
        "export_selector": s["export_selector"],
        "running": "1" if export.running else "0",
        "cxn_id": "0",
        "export_format": s["export_format"],
        "file_header": s["file_header"],
        "file_footer": s["file_footer"],
        "threshold": s["threshold"],
        "include_column_names": s["include_column_names"],
        "json_minify_type": s["json_minify_type"],
        "export_encoding": s["export_encoding"],
        "delimiter": s["delimiter"],
        "compression": s["compression"],
        "quoted_fields": s["quoted_fields"],
        "deduplicate_field_name": s["deduplicate_field_name"],
        "timestamp": _rfc3339(export.updated_at),
        "enclosure": s["enclosure"],
        "escape": s["escape"],
        "strip_characters": s["strip_characters"],
        "show_empty_tags": s["show_empty_tags"],
        "show_empty_parent_tags": s["show_empty_parent_tags"],
        "xml_write_document_tag": s["xml_write_document_tag"],
        "use_cdata": s["use_cdata"],
        "zip_inner_file_name": s["zip_inner_file_name"],
        "max_attempts": s["max_attempts"],
        "time_between_attempts": s["time_between_attempts"],
        "timeout": s["timeout"],
        "row_limit": s["row_limit"],
        "row_sort": s["row_sort"],
        "row_order": s["row_order"],
        "legacy_workers": "0",
        "worker_pid": worker["pid"] if worker else None,
        "worker_hostname": worker["hostname"] if worker else None,
        "blocked": "0",
        "export_index_field": s["export_index_field"],
        "destination": s["destination"],
        "destination_region": s["destination_region"],
        "created_at": _rfc3339(export.created_at),
        "export_fields": fields,
        "status": export.status,
        "last_log": log_json(export.logs.order_by("-id").first()),
    }


def _stored(settings: dict) -> dict:
    return {k: v for k, v in settings.items() if not k.startswith("_")}


def _apply(export: Export, body: dict) -> None:
    db_fields = export.db.fields
    settings = settings_merge(_stored(export.settings), body, db_fields=db_fields)
    if "export_fields" in body:
        fields = export_fields_parse(body["export_fields"], db_fields)
    else:
        fields = [(f.field_name, f.export_field_name, f.sort_order) for f in export.fields.all()]
    xml_names_check(settings, [name for _, name, _ in fields])
    export.settings = settings
    export.updated_at = clock.now()
    export.save()
    if "export_fields" in body:
        export.fields.all().delete()
        ExportField.objects.bulk_create(
            ExportField(export=export, field_name=src, export_field_name=name, sort_order=order)
            for src, name, order in sorted(fields, key=lambda f: f[2])
        )


@transaction.atomic
def export_add(*, db: CatalogDatabase, body: dict) -> Export:
    now = clock.now()
    export = Export.objects.create(db=db, settings={}, created_at=now, updated_at=now)
    _apply(export, body)  # a refused body rolls the add back: nothing is left behind
    return export


@transaction.atomic
def export_update(*, export: Export, body: dict) -> Export:
    export = Export.objects.select_for_update().get(id=export.id)
    _apply(export, body)
    return export


def export_schedule(*, export: Export, body: dict) -> dict:
    return schedule_set(model=Export, item_id=export.id, body=body)


def export_for_db(*, db: CatalogDatabase, export_id: str) -> Export:
    if not export_id.isdigit():
        raise ApiError("Export not found", 404)
    export = Export.objects.filter(db=db, id=int(export_id)).first()
    if export is None:
        raise ApiError("Export not found", 404)
    return export
