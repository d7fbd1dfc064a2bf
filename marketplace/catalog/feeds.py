"""The catalog feed: an export in the seller's platform database, made for the marketplace.

Provisioning is one staff action: create the export (our receiving URL and fresh
per-seller credentials, the mapping, format and compression), read it back and check
it holds exactly what we sent, set its schedule, and only then record it here. Any
failure on the way deletes what was created at the platform, so nothing is left
half-provisioned; the platform's message is kept on the seller's record for the
dashboard.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from marketplace.catalog.access import platform_api
from marketplace.catalog.errors import ApiAccessNeeded, CatalogError, FeedNotSetUp
from marketplace.catalog.mapping import FeedMapping
from marketplace.catalog.models import CatalogSource
from marketplace.catalog.url_keys import url_key_new
from marketplace.platform.errors import PlatformError, PlatformRejected

logger = logging.getLogger(__name__)

COMPRESSIONS = {"gzip": ".gz", "zip": ".zip", "": ""}
DELIMITERS = ("comma", "tab", "pipe", "semicolon")
# Delivery attempts the platform makes per run, and its per-attempt timeout (seconds).
DELIVERY = {"max_attempts": "3", "time_between_attempts": "30", "timeout": "60"}
# Interactive calls sleep out a short platform "wait" rather than fail the click.
HOLD_WAIT = 5.0


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
    message = error_message(prefix, exc)
    source.last_error = message[:500]
    source.last_error_at = timezone.now()
    source.save(update_fields=["last_error", "last_error_at", "updated_at"])
    return ApiAccessNeeded(message) if isinstance(exc, ApiAccessNeeded) else CatalogError(message)


def clear_error(source: CatalogSource) -> None:
    source.last_error = ""
    source.last_error_at = None


def feed_provision(*, source: CatalogSource, feed: FeedSettings) -> CatalogSource:
    """Create, check and schedule the seller's feed export; record it only when all held."""
    if source.has_feed:
        raise CatalogError("This seller already has a feed: change or remove it instead.")
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
            schedule = api.exports.schedule(
                db_id=source.db_id,
                export_id=export_id,
                day=feed.day,
                hour=feed.hour,
                minute=feed.minute,
            )
    except (CatalogError, PlatformError) as exc:
        if export_id:
            _export_delete_quietly(source, export_id)
        elif isinstance(exc, PlatformError) and not isinstance(exc, PlatformRejected):
            # The create's answer was lost (timeout, 5xx, unreadable): the export may
            # exist all the same. Its receiving URL holds this attempt's fresh key.
            _export_orphans_delete(source, folder=body["host"])
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
    source.cron = str(schedule.get("cron") or "")
    source.paused = str(schedule.get("paused", "0")) in ("1", "true", "True")
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


def _export_delete_quietly(source: CatalogSource, export_id: str) -> None:
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            api.exports.delete(db_id=source.db_id, export_id=export_id)
    except (CatalogError, PlatformError):
        logger.warning("could not delete export %s of db %s", export_id, source.db_id)


def _export_orphans_delete(source: CatalogSource, *, folder: str) -> None:
    """Delete the exports that deliver to ``folder`` (one provisioning attempt's)."""
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            for export in api.exports.list(db_id=source.db_id):
                if str(export.get("host", "")) == folder and export.get("id"):
                    api.exports.delete(db_id=source.db_id, export_id=str(export["id"]))
    except (CatalogError, PlatformError):
        logger.warning("could not look for an orphan export in db %s", source.db_id)


def _require_feed(source: CatalogSource) -> None:
    if not source.has_feed:
        raise FeedNotSetUp("This seller has no feed yet.")


def feed_schedule_set(
    *, source: CatalogSource, day: str, hour: str, minute: str, paused: bool
) -> CatalogSource:
    _require_feed(source)
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            answer = api.exports.schedule(
                db_id=source.db_id,
                export_id=source.export_id,
                day=day,
                hour=hour,
                minute=minute,
                paused=paused,
            )
    except (CatalogError, PlatformError) as exc:
        raise record_error(source, "Changing the schedule failed", exc) from exc
    source.cron = str(answer.get("cron") or "")
    source.paused = str(answer.get("paused", "0")) in ("1", "true", "True")
    clear_error(source)
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
    with platform_api(seller_id=source.seller_id) as api:
        export = api.exports.get(db_id=source.db_id, export_id=source.export_id)
    source.platform_status = str(export.get("status") or "")[:100]
    last_log = export.get("last_log")
    source.platform_last_log = last_log if isinstance(last_log, dict) else {}
    source.save(update_fields=["platform_status", "platform_last_log", "updated_at"])
    return source


def feed_status_sweep() -> int:
    """Refresh every feed's platform status; stops at once while sign-in is needed."""
    done = 0
    for source in CatalogSource.objects.filter(feed_state=CatalogSource.FeedState.ACTIVE):
        try:
            feed_status_refresh(source=source)
        except ApiAccessNeeded:
            return done  # catalog work waits for a person to sign in; no storm of failures
        except PlatformError as exc:
            logger.warning("feed status of seller %s: %s", source.seller_id, exc)
            continue
        done += 1
    return done
