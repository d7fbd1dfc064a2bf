"""The listing-status import: a join import in the seller's platform database that reads
our listing-status file and adds its columns to the seller's rows.

Set up right after the catalog feed (and by a staff retry when that failed): fresh
per-seller credentials for the status file, then at the platform create the import,
set its delimiters, its file map (source keys hex-encoded: the file's column names
carry spaces and accents) and its schedule, and read it back: anything the platform
does not hold as sent is an error. A failure after the create deletes the import; if
even that fails, its id is kept for the cleanup sweep and shown to staff. The
platform's message of any refusal is kept on the import's record for the staff pages.
The lifecycle the import shares with the feed's export (errors, schedule, clean-up,
credentials, status) is ``provisioned.py``'s.

The platform fetches the status file while we set the file map (it checks the mapped
columns against the file's header), so the credentials are stored before the first call.
"""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from marketplace.catalog import dispatch, provisioned
from marketplace.catalog.api_access.api_user import platform_api
from marketplace.catalog.errors import CatalogError, FeedNotSetUp
from marketplace.catalog.feeds import provision
from marketplace.catalog.listing_status.status_file import (
    COLUMNS,
    DEFAULT_TARGETS,
    status_password_hash,
)
from marketplace.catalog.listing_status.status_outbox import edrts_sends, status_import_ran
from marketplace.catalog.models import CatalogSource, StatusImport
from marketplace.catalog.url_keys import url_key_new
from marketplace.platform.errors import PlatformError
from marketplace.platform.imports import (
    Delimiters,
    file_map_body,
    file_map_decoded,
    maps_pairs,
)

HOLD_WAIT = provisioned.HOLD_WAIT
# How the status file is written (status_file.py): UTF-8, comma, '"' doubled inside.
DELIMITERS = Delimiters(encoding="UTF-8", separator=",", enclosure='"', escaper='"')
# Fetch attempts per run, the pause between them and the per-attempt timeout (seconds).
FETCH = {"timeout": "60", "max_attempts": "3", "time_between_attempts": "30"}
# Hourly at minute 15: after the nightly feed, sellers see a new status within the hour.
# With EDRTS on for the seller (statuses reach their database within seconds), the import
# is the daily reconciliation instead: once a day at minute 15 after the feed's daily run
# (``import_schedule_default``); turning EDRTS off brings the hourly schedule back.
# A platform that refuses hour "*" (only 0-23) gets the first run of that minute after the
# feed's daily run instead (``hourly_fallback_hour``), and staff read why on the page.
DEFAULT_SCHEDULE = {"day": "*", "hour": "*", "minute": "15"}
# The platform's rule for target field names (pinned decision of issue 13).
FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

logger = logging.getLogger(__name__)

# The listing-status import, as the lifecycle of provisioned objects sees it.
IMPORT = provisioned.Kind(
    noun="import",
    group=lambda api: api.imports,
    id_arg="import_id",
    url_field="url",
    model=StatusImport,
    source_field="source",
    cleanup_field="cleanup_id",
    message=provision.error_message,
    schedule_note_field="schedule_note",
)


@dataclass(frozen=True)
class ImportSchedule:
    day: str = DEFAULT_SCHEDULE["day"]
    hour: str = DEFAULT_SCHEDULE["hour"]
    minute: str = DEFAULT_SCHEDULE["minute"]


def import_schedule_default(source: CatalogSource) -> ImportSchedule:
    """Hourly; daily (just after the feed's run) when EDRTS sends the seller's statuses,
    once the import has run (EDRTS waits for that first run: it creates the fields EDRTS
    writes, so it comes within the hour)."""
    if edrts_sends(source=source) and status_import_ran(source=source):
        minute = DEFAULT_SCHEDULE["minute"]
        return ImportSchedule(day="*", hour=hourly_fallback_hour(source, minute), minute=minute)
    return ImportSchedule()


def status_import_schedule_follow(*, source: CatalogSource) -> StatusImport | None:
    """EDRTS was turned on or off: put the import on its default schedule for that (its
    pause kept). None when there is no import to reschedule."""
    status_import = status_import_of(source)
    if not status_import.is_active:
        return None
    schedule = import_schedule_default(source)
    return status_import_schedule_set(
        source=source,
        day=schedule.day,
        hour=schedule.hour,
        minute=schedule.minute,
        paused=status_import.paused,
    )


# --- what we ask the platform for ---------------------------------------------------------


def status_file_url(status_key: str) -> str:
    path = reverse("catalog_status:listing_status", kwargs={"status_key": status_key})
    return settings.APP_BASE_URL.rstrip("/") + path


def join_key_of(source: CatalogSource) -> str:
    """The seller's field that feeds the feed's SKU column: the rows' join key."""
    for column, field in source.export_fields or []:
        if column == "sku" and field:
            return str(field)
    raise CatalogError("The feed maps no field to the SKU column: the status file cannot join.")


def targets_validate(*, source: CatalogSource, targets: dict[str, str]) -> dict[str, str]:
    """``{role: field}`` for every status column but the SKU, checked: valid field names,
    all different, and none the feed reads (the import would overwrite the seller's data).
    Raises ``CatalogError`` naming every problem."""
    fed = {str(field) for _, field in source.export_fields or [] if field}
    problems = []
    cleaned: dict[str, str] = {}
    for role, header in COLUMNS:
        if role == "sku":
            continue
        target = str(targets.get(role) or DEFAULT_TARGETS[role]).strip()
        if not FIELD_NAME.match(target):
            problems.append(
                f"“{target}” ({header}) is not a field name: letters, digits and _, "
                "not starting with a digit, at most 64"
            )
        elif target in fed:
            problems.append(
                f"“{target}” ({header}) is a field the feed reads: the import would overwrite it"
            )
        elif target in cleaned.values():
            problems.append(f"“{target}” is used twice")
        cleaned[role] = target
    if problems:
        raise CatalogError("Target fields: " + "; ".join(problems))
    return cleaned


def status_maps(*, join_key: str, targets: dict[str, str]) -> dict[str, str]:
    """{the file's column name: the seller's field}: the SKU column onto the join key."""
    return {header: join_key if role == "sku" else targets[role] for role, header in COLUMNS}


def import_settings(
    *, source: CatalogSource, status_key: str, username: str, password: str, join_key: str
) -> dict[str, Any]:
    """The import we create (and update on credential rotation). Pinned decisions: a
    ``join_info`` import reading a ``url`` source."""
    return {
        "name": f"Marketplace listing status ({settings.DJANGO_ENV}, seller {source.seller_id})",
        "join_type": "join_info",
        "file_name": "listing-status.csv",
        "file_location": "url",
        "url": status_file_url(status_key),
        "username": username,
        "password": password,
        "join_key": join_key,
        **FETCH,
        "tags": ["marketplace", "listing-status"],
    }


def hourly_fallback_hour(source: CatalogSource, minute: str) -> str:
    """The hour of a once-a-day run when the platform refuses an hourly one: the first
    ``minute`` after the feed's daily run (feed at 02:00 → 02:15), so the status a
    seller reads follows the day's feed; the feed's default hour when its schedule is
    not a plain daily time."""
    parts = (source.cron or "").split()
    feed_minute, feed_hour = [*parts, "", ""][:2]
    if not (feed_hour.isdigit() and feed_minute.isdigit() and str(minute).isdigit()):
        return provision.FeedSettings.hour
    hour = int(feed_hour) + (0 if int(minute) > int(feed_minute) else 1)
    return str(hour % 24)


def maps_held(file_map: Any, maps: dict[str, str]) -> bool:
    """Whether a file map read back holds exactly ``maps`` ({column: target}, sent with
    hex keys): keyed by decoded names or as sent, compared as (column, target) pairs."""
    held = file_map.get("maps") if isinstance(file_map, dict) else None
    return maps_pairs(held, encoded=True, columns=frozenset(maps)) == set(maps.items())


def import_differences(
    *, sent: dict[str, Any], maps: dict[str, str], got: dict[str, Any]
) -> list[str]:
    """Names of what the platform does not hold as we sent it (never the password). Only
    what we sent is compared: the schedule is read from the schedule call's answer, as
    an import record need not hold ``cron``."""
    differences = [
        key
        for key in ("name", "join_type", "url", "username", "join_key")
        if str(got.get(key, "")) != str(sent[key])
    ]
    file_map = got.get("file_map")
    file_map = file_map if isinstance(file_map, dict) else {}
    if not maps_held(file_map, maps):
        differences.append("file_map maps")
    for key in ("encoding", "separator", "enclosure", "escaper"):
        if str(file_map.get(key, "")) != getattr(DELIMITERS, key):
            differences.append(f"file_map {key}")
    return differences


# --- records and errors -------------------------------------------------------------------


def status_import_of(source: CatalogSource) -> StatusImport:
    status_import, _ = StatusImport.objects.get_or_create(source=source)
    return status_import


def import_error_record(status_import: StatusImport, prefix: str, exc: Exception) -> CatalogError:
    return provisioned.error_record(IMPORT, status_import, prefix, exc)


def import_error_clear(status_import: StatusImport) -> None:
    provisioned.error_clear(status_import)


def _require_import(status_import: StatusImport) -> None:
    if not status_import.is_active:
        raise FeedNotSetUp("This seller's listing-status import is not set up.")


# --- services -------------------------------------------------------------------------------


def status_import_provision(
    *,
    source: CatalogSource,
    targets: dict[str, str] | None = None,
    schedule: ImportSchedule | None = None,
) -> StatusImport:
    """Create, map, schedule and check the seller's listing-status import; record it only
    when all held. Raises ``CatalogError`` with the platform's words otherwise."""
    status_import = status_import_of(source)
    if status_import.is_active:
        raise CatalogError("The listing-status import is already set up: change or remove it.")
    if not source.has_feed:
        raise FeedNotSetUp("Set up the catalog feed first: the status file follows its SKUs.")
    schedule = schedule or import_schedule_default(source)
    try:
        join_key = join_key_of(source)
        cleaned = targets_validate(source=source, targets=targets or status_import.targets or {})
    except CatalogError as exc:
        raise import_error_record(
            status_import, "Setting up the listing-status import failed", exc
        ) from exc
    status_key = url_key_new()
    username = f"status-{source.seller_id}"
    password = secrets.token_urlsafe(32)
    # Stored before any call: the platform fetches the file while we set the file map.
    status_import.state = StatusImport.State.PROVISIONING
    status_import.import_id = ""
    status_import.status_key = status_key
    status_import.username = username
    status_import.password_hash = status_password_hash(password)
    status_import.join_key = join_key
    status_import.targets = cleaned
    status_import.save()
    body = import_settings(
        source=source,
        status_key=status_key,
        username=username,
        password=password,
        join_key=join_key,
    )
    maps = status_maps(join_key=join_key, targets=cleaned)
    import_id = ""
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            import_id = str(api.imports.create(db_id=source.db_id, settings=body)["id"])
            api.imports.delimiters(db_id=source.db_id, import_id=import_id, delimiters=DELIMITERS)
            _file_map_put(api, source=source, import_id=import_id, maps=maps)
            held = provisioned.schedule_put(
                api.imports,
                db_id=source.db_id,
                ids=IMPORT.ids(import_id),
                **asdict(schedule),
                fallback_hour=hourly_fallback_hour(source, schedule.minute),
            )
            stored = api.imports.get(db_id=source.db_id, import_id=import_id)
            differences = import_differences(sent=body, maps=maps, got=stored)
            if differences:
                raise CatalogError(
                    "The platform did not keep the listing-status import as asked ("
                    + ", ".join(differences)
                    + "); it was removed again."
                )
    except (CatalogError, PlatformError) as exc:
        # The import this attempt made (or, its create's answer lost, the one reading this
        # attempt's fresh status URL) is deleted, or left to the clean-up sweep.
        provisioned.leftovers_delete(
            IMPORT, record=status_import, object_id=import_id, url=body["url"], exc=exc
        )
        status_import.state = StatusImport.State.FAILED
        status_import.status_key = None
        status_import.password_hash = ""
        status_import.save()
        raise import_error_record(
            status_import, "Setting up the listing-status import failed", exc
        ) from exc
    status_import.state = StatusImport.State.ACTIVE
    status_import.import_id = import_id
    provisioned.schedule_keep(IMPORT, status_import, held)
    status_import.provisioned_at = timezone.now()
    _store_platform_view(status_import, stored)
    import_error_clear(status_import)
    status_import.save()
    return status_import


def _file_map_put(api: Any, *, source: CatalogSource, import_id: str, maps: dict[str, str]) -> None:
    """Put the file map (hex keys) and check the platform holds our columns and targets.

    ``clean_file_headers`` is ``0``: we write the header ourselves (status_file.HEADER:
    no byte-order mark, no surrounding spaces), and a platform whose cleaning also
    normalises names (lowercase, ``_``) would no longer find the columns we map."""
    answer = api.imports.file_map(
        db_id=source.db_id,
        import_id=import_id,
        body=file_map_body(
            delimiters=DELIMITERS, maps=maps, ignore_join={}, clean_file_headers=False
        ),
    )
    decoded = file_map_decoded(answer)
    if not maps_held(decoded, maps):
        held = maps_pairs(decoded.get("maps"), encoded=True, columns=frozenset(maps))
        raise CatalogError(
            "The platform read the file map's columns differently from what we sent "
            f"({sorted(column for column, _ in held)!r})."
        )


def status_import_targets_set(*, source: CatalogSource, targets: dict[str, str]) -> StatusImport:
    """Staff changed the target fields: put the file map again and read it back."""
    status_import = status_import_of(source)
    prefix = "Changing the target fields failed"
    try:
        cleaned = targets_validate(source=source, targets=targets)
    except CatalogError as exc:
        raise import_error_record(status_import, prefix, exc) from exc
    if not status_import.is_active:
        # Nothing at the platform yet: the next set-up uses them.
        status_import.targets = cleaned
        status_import.save(update_fields=["targets", "updated_at"])
        return status_import
    maps = status_maps(join_key=status_import.join_key, targets=cleaned)
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            _file_map_put(api, source=source, import_id=status_import.import_id, maps=maps)
            stored = api.imports.get(db_id=source.db_id, import_id=status_import.import_id)
        if not maps_held(stored.get("file_map"), maps):
            raise CatalogError("The platform did not keep the new target fields.")
    except (CatalogError, PlatformError) as exc:
        raise import_error_record(status_import, prefix, exc) from exc
    status_import.targets = cleaned
    _store_platform_view(status_import, stored)
    import_error_clear(status_import)
    status_import.save()
    return status_import


def status_import_schedule_set(
    *, source: CatalogSource, day: str, hour: str, minute: str, paused: bool
) -> StatusImport:
    status_import = status_import_of(source)
    _require_import(status_import)
    provisioned.schedule_set(
        IMPORT,
        record=status_import,
        object_id=status_import.import_id,
        prefix="Changing the import's schedule failed",
        day=day,
        hour=hour,
        minute=minute,
        paused=paused,
        fallback_hour=hourly_fallback_hour(source, minute),
    )
    status_import.save()
    return status_import


def status_import_remove(*, source: CatalogSource) -> StatusImport:
    """Delete the import at the platform (404 counts as gone) and forget it here; a
    delete that fails is left to the cleanup sweep (the file stops answering at once)."""
    status_import = status_import_of(source)
    import_id = status_import.import_id
    if import_id and not provisioned.delete(IMPORT, source=source, object_id=import_id):
        status_import.cleanup_id = import_id
    status_import.state = StatusImport.State.NONE
    status_import.import_id = ""
    status_import.status_key = None
    status_import.username = ""
    status_import.password_hash = ""
    status_import.cron = ""
    status_import.schedule_note = ""
    status_import.platform_status = ""
    status_import.last_download_time = ""
    status_import.last_log = {}
    import_error_clear(status_import)
    status_import.save()
    return status_import


def _store_platform_view(status_import: StatusImport, stored: dict[str, Any]) -> None:
    status_import.platform_status = str(stored.get("status") or "")[:20]
    status_import.last_download_time = str(stored.get("last_download_time") or "")[:32]
    last_log = stored.get("last_log")
    status_import.last_log = last_log if isinstance(last_log, dict) else {}
    if "cron" in stored:
        status_import.cron = str(stored.get("cron") or "")
    if "paused" in stored:
        status_import.paused = provisioned.flag(stored.get("paused"))
    status_import.status_checked_at = timezone.now()


def status_import_status_refresh(*, source: CatalogSource) -> StatusImport:
    """Read the import's status, last download, last run log and schedule.

    Its first run seen: the EDRTS sender, which waited for it, is woken, and the import
    goes to its daily schedule when EDRTS sends."""
    status_import = status_import_of(source)
    _require_import(status_import)
    stored = provisioned.platform_view(IMPORT, source=source, object_id=status_import.import_id)
    first_run = not status_import.last_download_time
    _store_platform_view(status_import, stored)
    first_run = first_run and bool(status_import.last_download_time)
    status_import.save(
        update_fields=[
            "platform_status",
            "last_download_time",
            "last_log",
            "cron",
            "paused",
            "status_checked_at",
            "updated_at",
        ]
    )
    if first_run:
        dispatch.status_sync_drain_enqueue(source.seller_id)
        try:
            status_import = status_import_schedule_follow(source=source) or status_import
        except CatalogError:
            # Kept on the import (its last_error); the schedule stays hourly meanwhile.
            logger.warning("import of seller %s: could not go daily", source.seller_id)
    return status_import


def status_import_status_sweep() -> int:
    """Refresh every import's platform view; stops at once while sign-in is needed."""
    return provisioned.status_sweep(
        IMPORT,
        StatusImport.objects.filter(state=StatusImport.State.ACTIVE).select_related("source"),
        lambda source: status_import_status_refresh(source=source),
    )


# --- the catalog feed and its import together ----------------------------------------------


def catalog_feed_provision(
    *, source: CatalogSource, feed: provision.FeedSettings
) -> tuple[CatalogSource, str]:
    """Set up the feed, then right after it the listing-status import. The feed stands
    even when the import fails (staff retry it); returns the import's error, if any."""
    source = provision.feed_provision(source=source, feed=feed)
    try:
        status_import_provision(source=source)
    except CatalogError as exc:
        return source, str(exc)
    return source, ""


def catalog_feed_remove(*, source: CatalogSource) -> CatalogSource:
    """Remove the feed, then its import (a failed import delete is left to the sweep)."""
    source = provision.feed_remove(source=source)
    status_import_remove(source=source)
    return source
