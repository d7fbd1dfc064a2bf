"""Seller refunds on the marketplace-facing interface (returns-refunds-contract.md):
``GET /refunds``, ``GET /orders/{n}/refunds``, ``GET /orders/{n}/refunds/{id}``,
``POST …/refunds/{id}/complete`` and ``…/errors``. The seller posts them through v2."""

from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest, JsonResponse

from sandbox.common import clock, violations
from sandbox.common.endpoint import endpoint
from sandbox.common.errors import validation_error
from sandbox.common.json_bodies import error_response, json_body
from sandbox.order_source.after_sale_answers import (
    complete_answer,
    conflict,
    empty_object_body,
    violation,
)
from sandbox.order_source.after_sale_query import (
    iso_moment,
    last_cursor,
    listing_filters,
    listing_page,
    refused_query,
    strict_params,
)
from sandbox.order_source.bearer import bearer_grant
from sandbox.order_source.order_views import ERRORS, _not_found, _own_order
from sandbox.order_source.returns_validation import (
    REFUND_ERROR_CODES,
    error_array_problems,
    error_items,
)
from sandbox.records.orders.after_sale import changed, mark_read, refund_json
from sandbox.records.orders.models import Grant, Refund

REFUND_LIST_PARAMETERS = frozenset(
    {"mp_order_numbers", "refund_status", "created_after", "created_before", "page_size", "cursor"}
)


def refund_filters(params: dict[str, str], fields: dict[str, str]) -> tuple[Q, int]:
    """The reference's filters: ``refund_status`` (comma list), ``created_after`` (on or
    after), ``created_before`` (on or before), plus the orders and paging ones."""
    shared = {k: v for k, v in params.items() if k in ("mp_order_numbers", "page_size", "cursor")}
    query, page_size = listing_filters(shared, Refund.STATUSES, fields)
    if "refund_status" in params:
        values = params["refund_status"].split(",")
        if any(v not in Refund.STATUSES for v in values):
            fields["refund_status"] = f"comma-separated values of {', '.join(Refund.STATUSES)}"
        query &= Q(status__in=values)
    for key, lookup, end_of_day in (
        ("created_after", "created_at__gte", False),
        ("created_before", "created_at__lte", True),
    ):
        if key in params:
            moment = iso_moment(params[key], end_of_day=end_of_day)
            if moment is None:
                fields[key] = (
                    "must be an ISO 8601 date or date-time (without a zone: America/New_York)"
                )
            else:
                query &= Q(**{lookup: moment})
    return query, page_size


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, parameters=None, csrf_exempt=False)
def refunds_list(request: HttpRequest, grant: Grant) -> JsonResponse:
    params, fields = strict_params(request, REFUND_LIST_PARAMETERS)
    if fields:
        return refused_query(request, grant, fields)
    query, page_size = refund_filters(params, fields)
    if fields:
        return refused_query(request, grant, fields)
    page, cursor = listing_page(Refund.objects.all(), query, grant, page_size)
    return JsonResponse(
        {"refunds": [refund_json(row) for row in page], "next_cursor": last_cursor(cursor)}
    )


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, csrf_exempt=False)
def order_refunds(request: HttpRequest, grant: Grant, mp_order_number: str) -> JsonResponse:
    order = _own_order(grant, mp_order_number)
    if order is None:
        return _not_found(mp_order_number)
    rows = list(order.refunds.select_related("order").order_by("id"))
    mark_read(rows)
    return JsonResponse({"refunds": [refund_json(row) for row in rows], "next_cursor": None})


def _own_refund(
    grant: Grant, mp_order_number: str, refund_id: str
) -> tuple[Refund | None, JsonResponse | None]:
    order = _own_order(grant, mp_order_number)
    if order is None:
        return None, _not_found(mp_order_number)
    row = (
        order.refunds.select_related("order")
        .filter(id=int(refund_id) if refund_id.isdigit() and len(refund_id) < 19 else -1)
        .first()
    )
    if row is None:
        return None, error_response("not_found", f"refund {refund_id!r} not found", 404)
    return row, None


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, csrf_exempt=False)
def refund_detail(
    request: HttpRequest, grant: Grant, mp_order_number: str, refund_id: str
) -> JsonResponse:
    row, missing = _own_refund(grant, mp_order_number, refund_id)
    if row is None:
        assert missing is not None
        return missing
    mark_read([row])
    return JsonResponse(refund_json(row))


@endpoint(methods=("POST",), errors=ERRORS, auth=bearer_grant)
def refund_complete(
    request: HttpRequest, grant: Grant, mp_order_number: str, refund_id: str
) -> JsonResponse:
    row, missing = _own_refund(grant, mp_order_number, refund_id)
    if row is None:
        assert missing is not None
        return missing
    empty_object_body(request)
    label = f"refund {refund_id} of order {mp_order_number}"
    with transaction.atomic():
        row = Refund.objects.select_for_update().select_related("order").get(id=row.id)
        if row.status == Refund.COMPLETE:
            return complete_answer(refund_json(row))
        if row.status == Refund.PAUSED:
            violation(
                request,
                grant,
                violations.COMPLETE_AND_ERRORS,
                f"{label} marked complete while PAUSED by the errors reported on it",
            )
            return conflict(
                f"refund {refund_id} is PAUSED: it cannot be completed until the seller "
                "resolves its errors and it is CREATED again"
            )
        if not row.read_in_state:
            violation(
                request,
                grant,
                violations.COMPLETE_UNREAD,
                f"{label} marked complete without reading it",
            )
        row.status = Refund.COMPLETE
        changed(row, clock.now(), fields=["status"], new_state=True)
    return complete_answer(refund_json(row))


@endpoint(methods=("POST",), errors=ERRORS, auth=bearer_grant)
def refund_errors(
    request: HttpRequest, grant: Grant, mp_order_number: str, refund_id: str
) -> JsonResponse:
    row, missing = _own_refund(grant, mp_order_number, refund_id)
    if row is None:
        assert missing is not None
        return missing
    body = json_body(request)
    problems = error_array_problems(body, REFUND_ERROR_CODES, line_key=None, line_numbers=set())
    if problems:
        return validation_error("the error report is invalid", dict(problems))
    assert isinstance(body, list)
    items = error_items(body, line_key=None)
    label = f"refund {refund_id} of order {mp_order_number}"
    with transaction.atomic():
        row = Refund.objects.select_for_update().select_related("order").get(id=row.id)
        if row.status == Refund.COMPLETE:
            violation(
                request,
                grant,
                violations.COMPLETE_AND_ERRORS,
                f"errors reported on {label}, already marked complete",
            )
            return conflict(f"refund {refund_id} is COMPLETE: no errors now")
        if row.status == Refund.CREATED and row.history and row.history[-1]["errors"] == items:
            violation(
                request,
                grant,
                violations.REFUND_ERRORS_AFTER_CORRECTION,
                f"errors reported on {label} after the seller corrected it, the same as paused "
                "its previous version (read the refund before reporting)",
            )
        refund_pause(row, items, clock.now())
    return JsonResponse({})


def refund_pause(row: Refund, items: list[dict], now: datetime) -> None:
    """Errors pause a CREATED refund (its active errors are these); on a PAUSED one they add
    what is new, and the same body again (a retry after a lost answer) changes nothing."""
    if row.status == Refund.PAUSED:
        new = [item for item in items if item not in row.errors]
        if new:
            row.errors = [*row.errors, *new]
            changed(row, now, fields=["errors"], new_state=False)
        return
    row.errors = list(items)
    row.status = Refund.PAUSED
    row.pauses += 1
    row.paused_at = now
    changed(row, now, fields=["errors", "status", "pauses", "paused_at"], new_state=True)
