"""The query strings of ``GET /refunds`` and ``GET /returns``, read as the reference writes
them: ISO 8601 date-times where a time without a zone is in America/New_York, a date alone
the start of its day there (``created_after``) or its whole day (``created_before``), and an
unknown parameter refused with 400 naming it and counted as a violation (a client that
sends ``status`` or ``updated_after`` to the real platform lists every refund, or none).
"""

import re
from datetime import date, datetime, time, timedelta

from django.db.models import Q, QuerySet
from django.http import HttpRequest, JsonResponse

from sandbox.common import switches, violations
from sandbox.common.errors import validation_error
from sandbox.common.query_params import problems_message, query_params
from sandbox.order_source.after_sale_answers import violation
from sandbox.order_source.listing_cursor import cursor_decode, cursor_encode
from sandbox.order_source.order_views import _list_filters
from sandbox.order_source.validation import parse_datetime
from sandbox.records.orders.after_sale import PLATFORM_ZONE, mark_read
from sandbox.records.orders.models import Grant

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Extended ISO 8601: a date, ``T``, hh:mm[:ss[.fraction]], then ``Z``, ``±hh:mm``, ``±hhmm``,
# ``±hh`` or nothing.
_DATETIME = re.compile(
    r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)(Z|[+-]\d{2}(?::?\d{2})?)?$"
)


def iso_moment(value: str, *, end_of_day: bool) -> datetime | None:
    """The instant an ISO 8601 date or date-time names (zone-less: America/New_York); a date
    alone is its first instant, or with ``end_of_day`` its last. None when unreadable."""
    if _DATE.match(value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            return None
        if end_of_day:
            after = datetime.combine(day + timedelta(days=1), time(), PLATFORM_ZONE)
            return after - timedelta(microseconds=1)
        return datetime.combine(day, time(), PLATFORM_ZONE)
    match = _DATETIME.match(value)
    if match is None:
        return None
    day_text, clock_text, zone = match.groups()
    clock_text = re.sub(r"[.,](\d{1,6})\d*$", lambda m: "." + m.group(1).ljust(6, "0"), clock_text)
    if zone in (None, ""):
        suffix = ""
    elif zone == "Z":
        suffix = "+00:00"
    else:
        digits = zone[1:].replace(":", "")
        suffix = f"{zone[0]}{digits[:2]}:{digits[2:] or '00'}"
    try:
        moment = datetime.fromisoformat(f"{day_text}T{clock_text}{suffix}")
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=PLATFORM_ZONE)


def last_cursor(cursor: str | None) -> str | None:
    """A page's ``next_cursor``: the last page says null (A) or ``""`` (B)."""
    if cursor is None and switches.reading_b("next_cursor_last"):
        return ""
    return cursor


def refused_query(request: HttpRequest, grant: Grant, fields: dict[str, str]) -> JsonResponse:
    """400 naming each refused parameter, counted as a violation."""
    violation(
        request,
        grant,
        violations.AFTER_SALE_QUERY,
        f"{request.path}?{request.GET.urlencode()}: {problems_message(fields)}",
    )
    return validation_error(f"invalid query: {problems_message(fields)}", fields)


def strict_params(
    request: HttpRequest, allowed: frozenset[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """(the parameters, the problems): one not in ``allowed`` is named as unknown."""
    params, problems = query_params(request, allowed)
    named = ", ".join(sorted(allowed))
    for name, problem in problems.items():
        if problem == "unknown query parameter":
            problems[name] = f"unknown query parameter (this listing takes {named})"
    return params, problems


def listing_filters(
    params: dict[str, str], statuses: tuple[str, ...], fields: dict[str, str]
) -> tuple[Q, int]:
    """The filters ``GET /returns`` and ``GET /refunds`` share; the cursor holds
    (updated_at, id), the listing's sort key (a row changed while paging comes again later,
    never missed)."""
    page_params = {k: v for k, v in params.items() if k in ("page_size", "mp_order_numbers")}
    _, page_size = _list_filters(page_params, fields)
    query = Q()
    if "mp_order_numbers" in params:
        # (more numbers than the cap are refused by ``_list_filters``)
        query &= Q(order__mp_order_number__in=params["mp_order_numbers"].split(","))
    if "status" in params:
        values = params["status"].split(",")
        if any(v not in statuses for v in values):
            fields["status"] = f"comma-separated values of {', '.join(statuses)}"
        query &= Q(status__in=values)
    if "updated_after" in params:
        moment = parse_datetime(params["updated_after"])
        if moment is None:
            fields["updated_after"] = (
                "must be an RFC 3339 date-time with an offset (URL-encode the '+')"
            )
        else:
            query &= Q(updated_at__gt=moment)
    if "cursor" in params:
        decoded = cursor_decode(params["cursor"])
        if decoded is None:
            fields["cursor"] = "not a cursor this endpoint returned"
        else:
            at, row_id = decoded
            query &= Q(updated_at__gt=at) | Q(updated_at=at, id__gt=row_id)
    return query, page_size


def listing_page(rows: QuerySet, query: Q, grant: Grant, page_size: int) -> tuple[list, str | None]:
    found = list(
        rows.select_related("order")
        .filter(query, order__client_id=grant.client_id, order__seller_id=grant.seller_id)
        .order_by("updated_at", "id")[: page_size + 1]
    )
    page, more = found[:page_size], len(found) > page_size
    mark_read(page)
    return page, cursor_encode(page[-1].updated_at, page[-1].id) if more else None
