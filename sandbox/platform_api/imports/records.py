"""Imports as records: add, update, delete, schedule, delimiters, file map, and the import
object answered (every value a string, the password never)."""

from datetime import UTC, datetime

from django.db import transaction

from sandbox.common import clock, switches
from sandbox.common.api_php.errors import ApiError
from sandbox.common.log_times import log_time
from sandbox.common.schedule import schedule_set
from sandbox.platform_api.imports.fetch import FetchError, header_read
from sandbox.platform_api.imports.file_map import (
    NO_DELIMITERS,
    file_map_answer,
    file_map_request,
    maps_read_back,
    positions_of,
    stored_map,
)
from sandbox.platform_api.imports.models import Import, ImportLog
from sandbox.platform_api.imports.settings import delimiters_stored, settings_merge
from sandbox.records.databases.models import CatalogDatabase


def platform_time(moment: datetime | None) -> str:
    """RFC 3339 in UTC with its offset (``2026-11-24T10:55:00+00:00``), or ``""``: the
    interface document's date-time form, as every other date-time the sandbox answers."""
    return moment.astimezone(UTC).isoformat(timespec="seconds") if moment else ""


def log_json(log: ImportLog | None) -> dict:
    if log is None:
        return {}
    return {
        "id": str(log.id),
        "import_id": str(log.source_id),
        "message": log.message,
        "time": log_time(log.time),
        "error_flag": "1" if log.error_flag else "0",
    }


def _file_map_object(source: Import) -> dict:
    if source.delimiters is None:
        return {}
    d = source.delimiters
    maps = maps_read_back(source.file_map) if source.file_map else {}
    return {
        "encoding": d["encoding"],
        "separator": d["separator"],
        "enclosure": d["enclosure"],
        "escaper": d["escaper"],
        "maps": maps,
    }


def import_json(source: Import, *, as_answered: bool = True) -> dict:
    """The import object; no ``cron`` key under reading B of ``import_cron``. The control
    API (``as_answered`` False) shows ``file_location`` as set whatever the reading of
    ``import_file_location``."""
    s = source.settings
    file_map = source.file_map or {}
    answer = {
        "id": str(source.id),
        "db_id": str(source.db_id),
        "name": s["name"],
        "status": source.status,
        "join_type": s["join_type"],
        "file_location": s["file_location"],
        "file_name": s["file_name"],
        "url": s["url"],
        "username": s["username"],
        "file_type": (source.delimiters or {}).get("file_type", "delimited"),
        "file_map": _file_map_object(source),
        "name_based_maps": file_map.get("name_based_maps", "1"),
        "encode_source_file_keys": file_map.get("encode_source_file_keys", "0"),
        "clean_file_headers": file_map.get("clean_file_headers", "0"),
        "join_key": s["join_key"],
        "timeout": s["timeout"],
        "max_attempts": s["max_attempts"],
        "time_between_attempts": s["time_between_attempts"],
        "tags": s["tags"],
        "running": "1" if source.running else "0",
        "cron": source.cron,
        "paused": "1" if source.paused else "0",
        "last_download_time": platform_time(source.last_download_time),
        "last_log": log_json(source.logs.order_by("-id").first()),
    }
    if switches.reading_b("import_cron"):
        del answer["cron"]
    if as_answered and switches.reading_b("import_file_location"):
        # The reference's create/update examples: the source behind a preprocess script,
        # what was set under import_info (the URL no longer at the top).
        answer["import_info"] = {
            "file_location": answer["file_location"],
            "file_name": answer["file_name"],
            "url": answer.pop("url"),
            "username": answer["username"],
        }
        answer["preprocess_info"] = {"script": "", "enabled": "0"}
        answer["file_location"] = "preprocess_script"
    return answer


def _apply(source: Import, body: dict) -> None:
    source.settings = settings_merge(source.settings, body, db_fields=source.db.fields)
    if source.file_map:
        targets = set(source.file_map["maps"].values())
        s = source.settings
        if s["join_type"] == "join_info" and s["join_key"] not in targets:
            raise ApiError(f'join_key: no column of the file map targets "{s["join_key"]}"')
    source.updated_at = clock.now()
    source.save()


@transaction.atomic
def import_add(*, db: CatalogDatabase, body: dict) -> Import:
    now = clock.now()
    source = Import.objects.create(db=db, settings={}, created_at=now, updated_at=now)
    _apply(source, body)  # a refused body rolls the add back: nothing is left behind
    return source


@transaction.atomic
def import_update(*, source: Import, body: dict) -> Import:
    source = Import.objects.select_for_update().select_related("db").get(id=source.id)
    _apply(source, body)
    return source


def import_schedule(*, source: Import, body: dict) -> dict:
    return schedule_set(model=Import, item_id=source.id, body=body)


@transaction.atomic
def import_delimiters(*, source: Import, body: dict) -> Import:
    stored = delimiters_stored(body)
    source = Import.objects.select_for_update().get(id=source.id)
    source.delimiters = stored
    source.updated_at = clock.now()
    source.save()
    return source


def import_file_map(*, source: Import, body: dict) -> dict:
    """Check the map against the real file's header (fetched now), then keep it with the
    request's delimiters (they replace the stored ones)."""
    if source.delimiters is None:
        raise ApiError(NO_DELIMITERS)
    s = source.settings
    request = file_map_request(body=body, join_type=s["join_type"], join_key=s["join_key"])
    try:
        header = header_read(settings=s, dialect=request.dialect)
    except FetchError as exc:
        raise ApiError(f"maps: could not read the file's header from {s['url']}: {exc}") from exc
    positions_of(
        entries=request.entries,
        header=header,
        name_based=request.flags["name_based_maps"] == "1",
        clean=request.flags["clean_file_headers"] == "1",
    )
    with transaction.atomic():
        source = Import.objects.select_for_update().get(id=source.id)
        source.delimiters = request.delimiters
        source.file_map = stored_map(request)
        source.updated_at = clock.now()
        source.save()
    return file_map_answer(delimiters=source.delimiters, file_map=source.file_map)


def import_for_db(*, db: CatalogDatabase, import_id: str) -> Import:
    if not import_id.isdigit():
        raise ApiError("Import not found", 404)
    source = Import.objects.select_related("db").filter(db=db, id=int(import_id)).first()
    if source is None:
        raise ApiError("Import not found", 404)
    return source
