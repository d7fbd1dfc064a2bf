"""The lifecycle every platform object the app provisions in a seller's database shares:
the feed's export (feeds/provision.py), the listing-status import (listing_status/join_import.py),
and the next ones.

What each kind has in common, done here once:

- the error of the last failed action, kept on the object's record (with the platform's
  words) and cleared by the next success;
- the schedule, set and read back as the platform holds it;
- credential rotation: the new password reaches the platform before its hash is stored;
- clean-up after a failed set-up: the object the create made (or, when the create's
  answer was lost, the one that names this attempt's fresh URL) is deleted; a delete
  that fails or cannot be tried (the API access needs sign-in) is remembered on the
  record and retried by the clean-up sweep once the platform answers again;
- status refresh and the sweeps over every kind, which stop at once while sign-in is
  needed (catalog work waits for a person rather than fail call after call).

What differs (the API group, the id's name, the field that holds our URL, the record and
its clean-up field) is a ``Kind``, declared next to the kind's own services.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from marketplace.catalog.api_access.api_user import PlatformApi, platform_api
from marketplace.catalog.errors import ApiAccessNeeded, CatalogError
from marketplace.catalog.models import CatalogSource, StatusImport
from marketplace.platform.db_resources import schedule_paused
from marketplace.platform.errors import PlatformError, PlatformRejected

logger = logging.getLogger(__name__)

# Interactive calls sleep out a short platform "wait" rather than fail the click.
HOLD_WAIT = 5.0


@dataclass(frozen=True)
class Kind:
    """One kind of platform object the app provisions in a seller's database."""

    noun: str  # for logs: "export", "import"
    group: Callable[[PlatformApi], Any]  # its API group: api.exports, api.imports
    id_arg: str  # the group's name for the object's id: "export_id", "import_id"
    url_field: str  # the field holding the URL we gave it: how an orphan is recognised
    model: type[CatalogSource | StatusImport]  # the record that holds one
    source_field: str  # the record's CatalogSource ("" when the record is that source)
    cleanup_field: str  # the record's field naming an object left to delete, or ""
    # The failure in words for people, from a prefix ("Changing the schedule failed")
    # and the exception (the platform's words included).
    message: Callable[[str, Exception], str]
    # The record's field that says in words why the schedule set is not the one asked
    # for (a refused hourly schedule), or "" when the kind keeps none.
    schedule_note_field: str = ""

    def ids(self, object_id: str) -> dict[str, str]:
        return {self.id_arg: object_id}

    def source_of(self, record: Any) -> CatalogSource:
        """The record's linked database (select_related when read in bulk)."""
        source: CatalogSource = getattr(record, self.source_field) if self.source_field else record
        return source


def flag(value: Any) -> bool:
    """The platform's booleans arrive as "1"/"0", "true"/"false" or real ones."""
    return str(value) in ("1", "true", "True")


@dataclass(frozen=True)
class ScheduleHeld:
    """The schedule the platform holds after a schedule call, from its answer."""

    cron: str
    paused: bool
    note: str = ""  # why it is not the schedule asked for ("" when it is)


def schedule_put(
    group: Any,
    *,
    db_id: str,
    ids: dict[str, str],
    day: str,
    hour: str,
    minute: str,
    paused: bool | None = None,
    fallback_hour: str | None = None,
) -> ScheduleHeld:
    """One schedule call (``group`` is ``api.exports`` or ``api.imports``), read from its
    answer, never from the object's record (a platform need not echo ``cron`` there).

    Where the documents are silent, a platform may refuse ``hour`` ``*`` (reading B: only
    0-23). An hourly schedule refused with a 400 is then set once a day at
    ``fallback_hour`` and the same minute, and the note says so; without a
    ``fallback_hour``, or when that is refused too, the first refusal is raised."""
    try:
        answer = group.schedule(
            db_id=db_id, **ids, day=day, hour=hour, minute=minute, paused=paused
        )
        note = ""
    except PlatformRejected as refused:
        if hour != "*" or refused.status != 400 or fallback_hour is None:
            raise
        try:
            answer = group.schedule(
                db_id=db_id, **ids, day=day, hour=fallback_hour, minute=minute, paused=paused
            )
        except PlatformRejected:
            raise refused from None
        note = (
            f"the platform refused an hourly schedule (it said “{refused.message}”), "
            "so it runs once a day"
        )
    return ScheduleHeld(
        cron=str(answer.get("cron") or ""), paused=schedule_paused(answer), note=note
    )


# --- errors -----------------------------------------------------------------------------------


def error_record(kind: Kind, record: Any, prefix: str, exc: Exception) -> CatalogError:
    """Keep the failure (with the platform's words) on the record; the error to raise keeps
    its kind, so callers can tell "sign in again" from other failures."""
    message = kind.message(prefix, exc)
    record.last_error = message[:500]
    record.last_error_at = timezone.now()
    record.save(update_fields=["last_error", "last_error_at", "updated_at"])
    return ApiAccessNeeded(message) if isinstance(exc, ApiAccessNeeded) else CatalogError(message)


def error_clear(record: Any) -> None:
    """Forget the last failure (the caller saves the record)."""
    record.last_error = ""
    record.last_error_at = None


# --- actions on one object ----------------------------------------------------------------------


def schedule_set(
    kind: Kind,
    *,
    record: Any,
    object_id: str,
    prefix: str,
    day: str,
    hour: str,
    minute: str,
    paused: bool,
    fallback_hour: str | None = None,
) -> None:
    """Set the schedule at the platform and keep what it answers (``cron``, ``paused``,
    and why it differs from the one asked for: see ``schedule_put``); the caller saves
    the record."""
    source = kind.source_of(record)
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            held = schedule_put(
                kind.group(api),
                db_id=source.db_id,
                ids=kind.ids(object_id),
                day=day,
                hour=hour,
                minute=minute,
                paused=paused,
                fallback_hour=fallback_hour,
            )
    except (CatalogError, PlatformError) as exc:
        raise error_record(kind, record, prefix, exc) from exc
    schedule_keep(kind, record, held)
    error_clear(record)


def schedule_keep(kind: Kind, record: Any, held: ScheduleHeld) -> None:
    """Keep the schedule the platform holds on the record (the caller saves it)."""
    record.cron = held.cron
    record.paused = held.paused
    if kind.schedule_note_field:
        setattr(record, kind.schedule_note_field, held.note[:300])


_WEEKDAYS = ("Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays")


def schedule_in_words(cron: str) -> str:
    """A platform cron (``m h * * d``, UTC) in plain words for staff: ``daily at 02:15
    UTC``, ``every hour at minute 15``, ``Mondays at 03:45 UTC``; the cron itself when
    it is none of these."""
    parts = (cron or "").split()
    if not parts:
        return "none"
    if len(parts) != 5 or parts[2:4] != ["*", "*"]:
        return cron
    minute, hour, _, _, day = parts
    if day == "*":
        when = "daily"
    elif day.isdigit() and int(day) < 7:
        when = _WEEKDAYS[int(day)]
    else:
        return cron
    if hour == "*" and minute.isdigit():
        return f"every hour at minute {int(minute)}" + ("" if day == "*" else f", {when}")
    if hour.isdigit() and minute.isdigit():
        return f"{when} at {int(hour):02d}:{int(minute):02d} UTC"
    return cron


@sensitive_variables("password")
def credentials_put(
    kind: Kind,
    *,
    record: Any,
    object_id: str,
    username: str,
    password: str,
    what: str,
    prefix: str,
) -> None:
    """Give the platform's object a new password (credential rotation). Raises
    ``CatalogError`` (recorded on ``record``) when the platform refused it or did not keep
    it; the caller stores the new hash only after this returned."""
    source = kind.source_of(record)
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            answer = kind.group(api).update(
                db_id=source.db_id,
                **kind.ids(object_id),
                changes={"username": username, "password": password},
            )
        if str(answer.get("username", "")) != username:
            raise CatalogError(f"The platform did not keep {what}'s new credentials.")
    except (CatalogError, PlatformError) as exc:
        raise error_record(kind, record, prefix, exc) from exc


def platform_view(kind: Kind, *, source: CatalogSource, object_id: str) -> dict[str, Any]:
    """The object as the platform holds it now (its status and last run among it)."""
    with platform_api(seller_id=source.seller_id) as api:
        view: dict[str, Any] = kind.group(api).get(db_id=source.db_id, **kind.ids(object_id))
    return view


def _delete(kind: Kind, *, source: CatalogSource, object_id: str, hold_wait: float) -> None:
    """Delete at the platform; already gone (404) counts as done. Raises otherwise."""
    try:
        with platform_api(hold_wait=hold_wait, seller_id=source.seller_id) as api:
            kind.group(api).delete(db_id=source.db_id, **kind.ids(object_id))
    except PlatformRejected as exc:
        if exc.status != 404:
            raise


def delete(kind: Kind, *, source: CatalogSource, object_id: str) -> bool:
    """Delete at the platform; already gone counts as done. False when it failed (or could
    not be tried: the API access needs sign-in)."""
    try:
        _delete(kind, source=source, object_id=object_id, hold_wait=HOLD_WAIT)
    except (CatalogError, PlatformError) as exc:
        logger.warning(
            "could not delete %s %s of db %s: %s", kind.noun, object_id, source.db_id, exc
        )
        return False
    return True


def orphans_find(kind: Kind, *, source: CatalogSource, url: str) -> list[str]:
    """The ids of the objects naming ``url``: one set-up attempt's, whose create answer was
    lost (the URL holds that attempt's fresh key). Empty when none, or the list failed."""
    try:
        with platform_api(hold_wait=HOLD_WAIT, seller_id=source.seller_id) as api:
            return [
                str(found["id"])
                for found in kind.group(api).list(db_id=source.db_id)
                if str(found.get(kind.url_field, "")) == url and found.get("id")
            ]
    except (CatalogError, PlatformError) as exc:
        logger.warning("could not look for an orphan %s in db %s: %s", kind.noun, source.db_id, exc)
        return []


def leftovers_delete(kind: Kind, *, record: Any, object_id: str, url: str, exc: Exception) -> None:
    """After a set-up failed with ``exc``: delete what it left at the platform.

    ``object_id`` is the object the create made ("" when it answered nothing). When the
    create's answer was lost (timeout, 5xx, unreadable, not a refusal) the object may
    exist all the same: it is looked up by ``url``. What cannot be deleted now is put in
    the record's clean-up field (the caller saves the record) for the clean-up sweep.
    """
    source = kind.source_of(record)
    ids = [object_id] if object_id else []
    if not ids and isinstance(exc, PlatformError) and not isinstance(exc, PlatformRejected):
        ids = orphans_find(kind, source=source, url=url)
    for found in ids:
        if not delete(kind, source=source, object_id=found):
            setattr(record, kind.cleanup_field, found)


def pending_cleanup_first(kind: Kind, *, record: Any) -> None:
    """Before a new set-up: delete the object an earlier attempt left pending, so the new
    attempt's leftover (if any) never takes the place of one still at the platform (the
    clean-up field holds one id). Raises ``CatalogError`` while it cannot be deleted."""
    pending = getattr(record, kind.cleanup_field)
    if not pending:
        return
    try:
        _delete(kind, source=kind.source_of(record), object_id=pending, hold_wait=HOLD_WAIT)
    except ApiAccessNeeded:
        raise
    except (CatalogError, PlatformError) as exc:
        raise CatalogError(
            f"The {kind.noun} {pending} that an earlier set-up left at the platform could "
            "not be deleted yet (it is retried every few minutes): try again once it is gone."
        ) from exc
    kind.model.objects.filter(pk=record.pk, **{kind.cleanup_field: pending}).update(
        **{kind.cleanup_field: "", "updated_at": timezone.now()}
    )
    setattr(record, kind.cleanup_field, "")


# --- sweeps over every kind ----------------------------------------------------------------


def status_sweep(
    kind: Kind, records: Iterable[Any], refresh: Callable[[CatalogSource], object]
) -> int:
    """Refresh each record's platform view; stops at once while sign-in is needed."""
    done = 0
    for record in records:
        source = kind.source_of(record)
        try:
            refresh(source)
        except ApiAccessNeeded:
            return done  # catalog work waits for a person to sign in; no storm of failures
        except (CatalogError, PlatformError) as exc:
            logger.warning("platform status for seller %s: %s", source.seller_id, exc)
            continue
        done += 1
    return done


def cleanup_sweep(*kinds: Kind) -> int:
    """Delete what failed set-ups (or removals) left at the platform, every kind's; stops
    at once while sign-in is needed. Returns how many were deleted (or found gone)."""
    done = 0
    for kind in kinds:
        pending = kind.model.objects.exclude(**{kind.cleanup_field: ""})
        if kind.source_field:
            pending = pending.select_related(kind.source_field)
        for record in pending.order_by("pk"):
            object_id = getattr(record, kind.cleanup_field)
            source = kind.source_of(record)
            try:
                _delete(kind, source=source, object_id=object_id, hold_wait=0.0)
            except ApiAccessNeeded:
                return done
            except (CatalogError, PlatformError) as exc:
                logger.warning("clean-up of %s %s: %s", kind.noun, object_id, exc)
                continue
            # Conditional: a clean-up recorded meanwhile (another id) stays pending.
            kind.model.objects.filter(pk=record.pk, **{kind.cleanup_field: object_id}).update(
                **{kind.cleanup_field: "", "updated_at": timezone.now()}
            )
            done += 1
    return done
