"""The catalog feed: an export in the seller's platform database, made for the marketplace.

Provisioning is one staff action: create the export (our receiving URL and fresh
per-seller credentials, the mapping, format and compression), read it back and check
it holds exactly what we sent, set its schedule, and only then record it here. Any
failure on the way deletes what was created at the platform, so nothing is left
half-provisioned (a delete that fails, or waits for sign-in, is left to the clean-up
sweep and shown to staff); the platform's message is kept on the seller's record for the
dashboard. The lifecycle the feed shares with the other provisioned objects (errors,
schedule, clean-up, credentials, status) is ``provisioned.py``'s.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from marketplace.catalog import provisioned
from marketplace.catalog.api_access.api_user import platform_api
from marketplace.catalog.errors import ApiAccessNeeded, CatalogError, FeedNotSetUp
from marketplace.catalog.feeds.mapping import FeedMapping
from marketplace.catalog.models import CatalogSource
from marketplace.catalog.url_keys import url_key_new
from marketplace.platform.errors import PlatformError, PlatformRejected

COMPRESSIONS = {"gzip": ".gz", "zip": ".zip", "": ""}
DELIMITERS = ("comma", "tab", "pipe", "semicolon")
# Delivery attempts the platform makes per run, and its per-attempt timeout (seconds).
DELIVERY = {"max_attempts": "3", "time_between_attempts": "30", "timeout": "60"}
HOLD_WAIT = provisioned.HOLD_WAIT

# The feed's export, as the lifecycle of provisioned objects sees it.
EXPORT = provisioned.Kind(
    noun="export",
    group=lambda api: api.exports,
    id_arg="export_id",
    url_field="host",
    model=CatalogSource,
    source_field="",
    cleanup_field="export_cleanup_id",
    message=lambda prefix, exc: error_message(prefix, exc),  # defined below
)


@dataclass(frozen=True)
class FeedSettings:
    mapping: FeedMapping
    delimiter: str = "comma"
    compression: str = "gzip"
    day: str = "*"
    hour: str = "2"
    minute: str = "0"


def feed_password_hash(password: str) -> str:
    # The password is 32 random bytes: a plain SHA-256 is as strong as a slow hash here.
    return hashlib.sha256(password.encode()).hexdigest()


def feed_receiving_folder(feed_key: str) -> str:
    path = reverse("catalog_feeds:receive_folder", kwargs={"feed_key": feed_key})
    return settings.APP_BASE_URL.rstrip("/") + path


def export_body(
    *, source: CatalogSource, feed: FeedSettings, feed_key: str, username: str, password: str
) -> dict[str, Any]:
    """The Export we ask the platform for (pinned decisions of issue 12)."""
    folder = feed_receiving_folder(feed_key)
    body: dict[str, Any] = {
        "name": f"Marketplace catalog feed ({settings.DJANGO_ENV}, seller {source.seller_id})",
        "file_name": f"catalog-{source.seller_id}.csv{COMPRESSIONS[feed.compression]}",
        "protocol": urlsplit(folder).scheme,
        "host": folder,
        "username": username,
        "password": password,
        "export_format": "delimited",
        "delimiter": feed.delimiter,
        "include_column_names": "1",
        "quoted_fields": "1",
        "enclosure": '"',
        "escape": '"',
        "export_encoding": "UTF-8",
        "compression": feed.compression,
        "row_limit": 0,
        "export_selector": "true",
        **DELIVERY,
        "export_fields": feed.mapping.export_fields(),
    }
    if feed.compression == "zip":
        body["zip_inner_file_name"] = f"catalog-{source.seller_id}.csv"
    return body


def _fields_of(value: Any) -> list[tuple[str, str]]:
    items = list(value.values()) if isinstance(value, dict) else list(value or [])
    items = [item for item in items if isinstance(item, dict)]
    items.sort(key=lambda item: int(str(item.get("sort_order") or 0) or 0))
    return [(str(i.get("field_name") or ""), str(i.get("export_field_name") or "")) for i in items]


def export_differences(sent: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Names of the settings the platform does not hold as we sent them (never values of
    the password)."""
    differences = []
    for key, value in sent.items():
        if key == "export_fields":
            if _fields_of(got.get(key)) != _fields_of(value):
                differences.append(key)
        elif str(got.get(key, "")) != str(value):
            differences.append(key)
    return differences


def record_error(source: CatalogSource, prefix: str, exc: Exception) -> CatalogError:
    """Keep the failure (with the platform's words) on the seller's record; the error to
    raise keeps its kind, so callers can tell "sign in again" from other failures."""
    return provisioned.error_record(EXPORT, source, prefix, exc)


def clear_error(source: CatalogSource) -> None:
    provisioned.error_clear(source)


def feed_provision(*, source: CatalogSource, feed: FeedSettings) -> CatalogSource:
    """Create, check and schedule the seller's feed export; record it only when all held."""
    if source.has_feed:
        raise CatalogError("This seller already has a feed: change or remove it instead.")
    try:
        provisioned.pending_cleanup_first(EXPORT, record=source)
    except CatalogError as exc:
        raise record_error(source, "Setting up the feed failed", exc) from exc
    feed_key = url_key_new()
    username = f"feed-{source.seller_id}"
    password = secrets.token_urlsafe(32)
    body = export_body(
        source=source, feed=feed, feed_key=feed_key, username=username, password=password
    )
    export_id = ""
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            export_id = str(api.exports.add(db_id=source.db_id, export=body)["id"])
            stored = api.exports.get(db_id=source.db_id, export_id=export_id)
            differences = export_differences(body, stored)
            if differences:
                raise CatalogError(
                    "The platform did not keep the feed as asked ("
                    + ", ".join(differences)
                    + "); it was removed again."
                )
            schedule = provisioned.schedule_put(
                api.exports,
                db_id=source.db_id,
                ids=EXPORT.ids(export_id),
                day=feed.day,
                hour=feed.hour,
                minute=feed.minute,
            )
    except (CatalogError, PlatformError) as exc:
        # The export this attempt made (or, its create's answer lost, the one delivering to
        # this attempt's fresh receiving URL) is deleted, or left to the clean-up sweep.
        provisioned.leftovers_delete(
            EXPORT, record=source, object_id=export_id, url=body["host"], exc=exc
        )
        source.save(update_fields=["export_cleanup_id", "updated_at"])
        raise record_error(source, "Setting up the feed failed", exc) from exc
    source.feed_state = CatalogSource.FeedState.ACTIVE
    source.export_id = export_id
    source.feed_key = feed_key
    source.feed_username = username
    source.feed_password_hash = feed_password_hash(password)
    source.file_name = body["file_name"]
    source.export_fields = feed.mapping.as_json()
    source.delimiter = feed.delimiter
    source.compression = feed.compression
    provisioned.schedule_keep(EXPORT, source, schedule)
    source.provisioned_at = timezone.now()
    clear_error(source)
    source.save()
    return source


def error_message(prefix: str, exc: Exception) -> str:
    if isinstance(exc, ApiAccessNeeded | CatalogError):
        return str(exc)
    if isinstance(exc, PlatformRejected):
        return f"{prefix}: the platform said “{exc.message}” (HTTP {exc.status})."
    if isinstance(exc, PlatformError):
        return f"{prefix}: {exc}"
    return f"{prefix}: {exc}"


def _require_feed(source: CatalogSource) -> None:
    if not source.has_feed:
        raise FeedNotSetUp("This seller has no feed yet.")


def feed_schedule_set(
    *, source: CatalogSource, day: str, hour: str, minute: str, paused: bool
) -> CatalogSource:
    _require_feed(source)
    provisioned.schedule_set(
        EXPORT,
        record=source,
        object_id=source.export_id,
        prefix="Changing the schedule failed",
        day=day,
        hour=hour,
        minute=minute,
        paused=paused,
    )
    source.save()
    return source


def feed_run_request(*, source: CatalogSource) -> str:
    """Ask the platform to run the feed now; the file arrives at the receiving endpoint."""
    _require_feed(source)
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            message = api.exports.run(db_id=source.db_id, export_id=source.export_id)
    except (CatalogError, PlatformError) as exc:
        raise record_error(source, "Starting a run failed", exc) from exc
    source.run_requested_at = timezone.now()
    clear_error(source)
    source.save()
    return message


def feed_remove(*, source: CatalogSource) -> CatalogSource:
    """Delete the export at the platform (already gone counts as done), then here."""
    _require_feed(source)
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            api.exports.delete(db_id=source.db_id, export_id=source.export_id)
    except PlatformRejected as exc:
        if exc.status != 404:
            raise record_error(source, "Removing the feed failed", exc) from exc
    except (CatalogError, PlatformError) as exc:
        raise record_error(source, "Removing the feed failed", exc) from exc
    source.feed_state = CatalogSource.FeedState.NONE
    source.export_id = ""
    source.feed_key = None
    source.feed_username = ""
    source.feed_password_hash = ""
    source.cron = ""
    source.platform_status = ""
    source.platform_last_log = {}
    clear_error(source)
    source.save()
    return source


def feed_status_refresh(*, source: CatalogSource) -> CatalogSource:
    """Read the export's status and last run log (delivery failures show there)."""
    _require_feed(source)
    export = provisioned.platform_view(EXPORT, source=source, object_id=source.export_id)
    source.platform_status = str(export.get("status") or "")[:100]
    last_log = export.get("last_log")
    source.platform_last_log = last_log if isinstance(last_log, dict) else {}
    source.save(update_fields=["platform_status", "platform_last_log", "updated_at"])
    return source


def feed_status_sweep() -> int:
    """Refresh every feed's platform status; stops at once while sign-in is needed."""
    return provisioned.status_sweep(
        EXPORT,
        CatalogSource.objects.filter(feed_state=CatalogSource.FeedState.ACTIVE),
        lambda source: feed_status_refresh(source=source),
    )
