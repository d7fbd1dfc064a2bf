"""EDRTS's control API (/sandbox/api/edrts, local only): settings and fault switches,
jobs, and per product the ``mp_*`` fields with when EDRTS last set them."""

from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils.dateparse import parse_datetime

from sandbox.common.control import control
from sandbox.common.json_bodies import BadBody, json_object_body
from sandbox.edrts import inspection, state
from sandbox.edrts.models import EdrtsJob
from sandbox.records.databases.models import CatalogDatabase

MAX_PER_PAGE = 20_000
MAX_STAMPS = 200_000


def _whole(raw: str | None, name: str, default: int, minimum: int, maximum: int) -> int:
    if raw is None:
        return default
    if not raw.isdigit() or not minimum <= int(raw) <= maximum:
        raise BadBody(f"{name} must be a whole number from {minimum} to {maximum}")
    return int(raw)


def _settings_changes(body: dict) -> dict:
    changes: dict[str, object] = {}
    for key, value in body.items():
        if key == "delay_seconds":
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 <= value <= 600
            ):
                raise BadBody("delay_seconds must be a number from 0 to 600")
            changes[key] = float(value)
        elif key in ("batch_records", "fail_next", "lose_next", "unavailable_next"):
            low = 1 if key == "batch_records" else 0
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 100_000:
                raise BadBody(f"{key} must be a whole number from {low} to 100000")
            changes[key] = value
        else:
            raise BadBody(
                f"unknown setting {key!r}; settings: delay_seconds, batch_records, fail_next, "
                "lose_next, unavailable_next"
            )
    return changes


@control(("GET", "POST"))
def edrts_state(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        state.settings_set(_settings_changes(json_object_body(request)))
    return JsonResponse(inspection.state_json())


@control(("GET",))
def jobs(request: HttpRequest) -> JsonResponse:
    rows = EdrtsJob.objects.all()
    db_id = request.GET.get("db_id")
    if db_id is not None:
        rows = rows.filter(db_id=_whole(db_id, "db_id", 0, 1, 10**18))
    status = request.GET.get("status")
    if status is not None:
        if status not in dict(EdrtsJob.STATUSES):
            raise BadBody(f"status must be one of {', '.join(dict(EdrtsJob.STATUSES))}")
        rows = rows.filter(status=status)
    correlation_id = request.GET.get("correlation_id")
    if correlation_id is not None:
        rows = rows.filter(correlation_id=correlation_id)
    limit = _whole(request.GET.get("limit"), "limit", 100, 1, 10_000)
    chosen = rows.defer("payload").order_by("-id")[:limit]
    return JsonResponse(
        {
            "stats": inspection.stats(int(db_id) if db_id is not None else None),
            "jobs": [inspection.job_json(j) for j in chosen],
        }
    )


@control(("GET",))
def products(request: HttpRequest) -> JsonResponse:
    raw = request.GET.get("db_id")
    if raw is None:
        raise BadBody("db_id is required")
    db = get_object_or_404(CatalogDatabase, id=_whole(raw, "db_id", 0, 1, 10**18))
    return JsonResponse(
        inspection.products_json(
            db=db,
            page=_whole(request.GET.get("page"), "page", 1, 1, 10**9),
            per_page=_whole(request.GET.get("per_page"), "per_page", 1000, 1, MAX_PER_PAGE),
            edrts_only=request.GET.get("edrts_only", "") in ("1", "true"),
            key=request.GET.get("id"),
        )
    )


@control(("GET",))
def stamps(request: HttpRequest) -> JsonResponse:
    """Every field EDRTS set, flat and across databases (for freshness measurements)."""
    raw_db = request.GET.get("db_id")
    since = request.GET.get("since")
    moment = parse_datetime(since) if since else None
    if since and (moment is None or moment.tzinfo is None):
        raise BadBody("since must be an RFC 3339 date-time with an offset")
    return JsonResponse(
        inspection.stamps_json(
            db_id=_whole(raw_db, "db_id", 0, 1, 10**18) if raw_db is not None else None,
            field=request.GET.get("field"),
            since=moment,
            limit=_whole(request.GET.get("limit"), "limit", 10_000, 1, MAX_STAMPS),
        )
    )
