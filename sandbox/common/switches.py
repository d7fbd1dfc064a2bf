"""Process-wide behaviour switches set through the control API (not persisted).

Each has a start value (the ``serve`` flag, passed on as an environment variable) that
reset restores; the readings of the silent points start, and reset, at A.
"""

import os
import threading
from dataclasses import dataclass, field

# Requests a client had already sent when a 429/503 left may land just after it: this
# long after sending, they are not counted as early retries. Arrival is taken in the
# middleware, after gunicorn's thread picked the request up: on two loaded cores a call a
# sender thread had started before its sibling's 503 came back was seen 56 ms, and once
# 166 ms, after it (soak smoke with the machine loaded). 0.4 s keeps those out; the retry
# itself and a request on the same connection get no grace at all (retry_watch), and a
# client that keeps calling through a 1 s wait is still caught.
DEFAULT_RETRY_GRACE_SECONDS = 0.4


def _initial_auto_ship() -> float | None:
    raw = os.environ.get("SANDBOX_AUTO_SHIP_SECONDS", "")
    return float(raw) if raw else None


def _initial_additive_fields() -> bool:
    return os.environ.get("SANDBOX_ADDITIVE_FIELDS", "") == "1"


def _initial_retry_grace() -> float:
    raw = os.environ.get("SANDBOX_RETRY_GRACE_SECONDS", "")
    return float(raw) if raw else DEFAULT_RETRY_GRACE_SECONDS


# The points where the documents are silent (the contract's last table, "work under either
# reading"). Reading A is the sandbox's default; B is what a strict, independent
# implementation took. Each point is switched on its own (``readings_set``):
# * import_cron: an import record holds ``cron`` (A) or has no ``cron`` key (B).
# * schedule_hour: a schedule's ``hour`` takes ``*`` (A) or only 0-23 (B).
# * file_map_keys: an import's ``file_map.maps`` reads back keyed by decoded column names
#   (A) or keyed as sent, hex with ``encode_source_file_keys`` ``1`` (B).
# * clean_file_headers: ``1`` trims spaces and a BOM (A), and also normalises names:
#   lowercase, ``_`` for any other character than a-z, 0-9 and ``_`` (B).
# * export_delivery_url: an export is PUT to ``host`` + ``/`` + ``file_name`` (A) or to
#   ``host`` itself (B).
# * schedule_paused: a schedule answer's ``paused`` is a number 0/1 (A) or a string (B).
# * accounts: ``GET /user/accounts`` and ``/user/list-accounts`` both served (A), or
#   ``/user/accounts`` answers 404 as if removed (B).
# * edrts_answer: an EDRTS ``PUT``/``DELETE /db/{db_id}`` answers ``data`` as ``{"sku_count",
#   "batches"}`` (A) or as ``{"requests_in_queue", "last_processed_job"}`` (B); the
#   contract shows both and a client must accept either.
# * complete_answer: ``POST …/returns/{r}/complete`` and ``…/refunds/{id}/complete`` answer
#   the return or refund as GET shows it (A) or ``{}`` like the errors calls (B).
# * refund_notes_empty: a v1 refund whose v2 lines have no ``refund_notes`` has ``notes``
#   null (A) or ``""`` (B).
# -- After-sale readings (returns-refunds-contract.md; the sandbox's returns and refunds) --
# * return_refusal: a seller's refusal of a return leaves it AWAITING_AUTHORIZATION and
#   nothing more comes (A: the reference's four states; v2 ``reject`` is 409), or moves it
#   to ``REJECTED`` with the reason in ``notes`` (B).
# * return_order_number: a return ``PUT`` must carry ``mp_order_number`` in its body, equal
#   to the path's (A: the reference's field list), or may leave it out (B: its example).
# * v2_refunds_key: v2 ``GET /orders/{id}/refunds`` wraps the list in ``refunds`` (A) or in
#   ``cancellations`` as the reference's example does (B).
# * next_cursor_last (listed with issue 29's points below): the last page of
#   ``GET /refunds`` and ``GET /returns`` says ``next_cursor: null`` (A) or ``""`` (B), as
#   the orders listing's does.
AFTER_SALE_POINTS = (
    "return_refusal",
    "return_order_number",
    "v2_refunds_key",
)
# -- end of the after-sale readings ------------------------------------------------------

READING_POINTS: tuple[str, ...] = (
    *AFTER_SALE_POINTS,
    "import_cron",
    "schedule_hour",
    "file_map_keys",
    "clean_file_headers",
    "export_delivery_url",
    "schedule_paused",
    "accounts",
    "edrts_answer",
    "complete_answer",
    "refund_notes_empty",
)
# The readings of issue 29 (dates, cursors, the Platform API's answers, EDRTS jobs): the
# client must work under both.
# * date_format: a date-time a client sends to the order interface must be exactly
#   ``YYYY-MM-DDTHH:MM:SSZ`` (A; 400 naming the field) or any RFC 3339 date-time, and for
#   the listing filters a zone-less time read in America/New_York (B). A value in another
#   form counts a ``date_format`` violation under both.
# * next_cursor_last: the last page of a listing answers ``next_cursor`` null (A) or ``""``
#   (B; the reference types it a string and shows no null).
# * import_file_location: an import reads back ``file_location`` as sent (A) or as
#   ``preprocess_script`` with ``import_info``/``preprocess_info`` objects (B).
# * export_log_time: ``last_log.time`` is RFC 3339 with an offset (A) or
#   ``2023-01-29 00:02:53``, UTC without a zone (B).
# * unset_schedule_cron: a schedule call that unsets (``-1``) answers ``cron`` null (A) or
#   still shows the cron it had (B).
# * edrts_job_path: a job is read at ``GET /db/{db_id}/{correlation_id}`` only (A) or also
#   at the older ``/db/{db_id}/{correlation_id}/{batch_index}`` (B).
SPEC_29_POINTS = (
    "date_format",
    "next_cursor_last",
    "import_file_location",
    "export_log_time",
    "unset_schedule_cron",
    "edrts_job_path",
)
READING_POINTS += SPEC_29_POINTS
# The listings by ``mp_order_numbers`` (issue 34's reconciliation; ``order_numbers``):
# * order_numbers_cap: one call carries at most 100 numbers (A) or 50, a page (B).
# * unknown_order_numbers: on ``GET /orders`` a number the account lacks is absent from
#   the answer (A) or refuses the call with 400 naming it (B).
ORDER_NUMBERS_POINTS = ("order_numbers_cap", "unknown_order_numbers")
READING_POINTS += ORDER_NUMBERS_POINTS
# The refresh token (the reference gives one and is silent on its reuse):
# * refresh_reuse: a spent (rotated) refresh token presented again revokes the grant (A),
#   or, within 60 s of its spending and while its successor was never presented, is
#   exchanged again (B; the answer carrying the successor was lost). A reuse outside that
#   is a ``refresh_token_reuse`` violation under both.
READING_POINTS += ("refresh_reuse",)
READINGS = ("A", "B")
# The token call's body (contract: the references disagree): both accepted (A), JSON only
# (B), form only (C). Its own switch, not a point of "all": the app sends one body, set by
# its PLATFORM_TOKEN_BODY, so a run under "all B" must not refuse its sign-in.
TOKEN_BODY_READINGS = ("A", "B", "C")


def _all_a() -> dict[str, str]:
    return dict.fromkeys(READING_POINTS, "A")


@dataclass
class Switches:
    rotation_enabled: bool = True
    auto_ship_seconds: float | None = None
    # Off: answers carry only the contract's fields. On: unknown fields everywhere.
    additive_fields: bool = False
    retry_grace_seconds: float = DEFAULT_RETRY_GRACE_SECONDS
    readings: dict[str, str] = field(default_factory=_all_a)
    token_body: str = "A"


_lock = threading.Lock()
current = Switches(
    auto_ship_seconds=_initial_auto_ship(),
    additive_fields=_initial_additive_fields(),
    retry_grace_seconds=_initial_retry_grace(),
)


def set_rotation(*, enabled: bool) -> None:
    with _lock:
        current.rotation_enabled = enabled


def set_auto_ship(*, seconds: float | None) -> None:
    with _lock:
        current.auto_ship_seconds = seconds


def set_additive_fields(*, enabled: bool) -> None:
    with _lock:
        current.additive_fields = enabled


def set_retry_grace(*, seconds: float) -> None:
    with _lock:
        current.retry_grace_seconds = seconds


class ReadingError(ValueError):
    pass


def readings_set(changes: dict[str, object]) -> dict[str, str]:
    """Switch points to reading ``"A"`` or ``"B"``: ``{point: reading}``, or ``{"all":
    reading}`` first and then single points over it. All or nothing: an unknown point or
    reading raises ``ReadingError`` and changes nothing. Answers every point's reading."""
    wanted = {}
    for key, value in changes.items():
        if key != "all" and key not in READING_POINTS:
            raise ReadingError(f"unknown point {key!r}; points: all, {', '.join(READING_POINTS)}")
        if value not in READINGS:
            raise ReadingError(f'{key}: the reading must be "A" or "B"')
        wanted[key] = value
    with _lock:
        if "all" in wanted:
            current.readings = dict.fromkeys(READING_POINTS, wanted.pop("all"))
        current.readings.update(wanted)
        return dict(current.readings)


def set_token_body(reading: str) -> None:
    if reading not in TOKEN_BODY_READINGS:
        raise ReadingError('token_body: the reading must be "A", "B" or "C"')
    with _lock:
        current.token_body = reading


def reading_b(point: str) -> bool:
    """Whether ``point`` is switched to reading B (a KeyError names a misspelt point)."""
    return current.readings[point] == "B"


def reset() -> None:
    with _lock:
        current.readings = _all_a()
        current.token_body = "A"
        current.rotation_enabled = True
        current.auto_ship_seconds = _initial_auto_ship()
        current.additive_fields = _initial_additive_fields()
        current.retry_grace_seconds = _initial_retry_grace()


def snapshot() -> dict:
    return {
        "rotation_enabled": current.rotation_enabled,
        "auto_ship_seconds": current.auto_ship_seconds,
        "additive_fields": current.additive_fields,
        "retry_grace_seconds": current.retry_grace_seconds,
        "readings": dict(current.readings),
        "token_body": current.token_body,
    }
