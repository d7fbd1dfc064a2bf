"""The platform's order interface (/api/v1/orders...), scoped to the token's seller.

A marketplace sees only the orders it placed into the account of the seller who granted
its token; anything else is 404, never 403 (no hint that an order exists elsewhere).
"""

import re
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.http import HttpRequest, JsonResponse

from sandbox.common import clock, switches, violations
from sandbox.common.endpoint import ErrorShape, endpoint
from sandbox.common.errors import method_not_allowed, query_refused, validation_error
from sandbox.common.json_bodies import BadBody, error_response, json_body
from sandbox.common.query_params import problems_message
from sandbox.common.wire_dates import NEW_YORK, sent_datetime
from sandbox.order_source.bearer import bearer_grant
from sandbox.order_source.listing_cursor import cursor_decode, cursor_encode
from sandbox.order_source.order_numbers import order_numbers_cap, over_page_count, unknown_refusal
from sandbox.order_source.validation import (
    changed_paths,
    dates_off_wire,
    error_report_problems,
    order_problems,
    transition_problem,
)
from sandbox.records.orders.fulfillment import (
    FILTER_NAMES,
    fulfillments_json,
    line_summaries,
    order_json,
)
from sandbox.records.orders.models import ErrorReport, Grant, Order, OrderStateChange
from sandbox.records.orders.state_changes import marketplace_state_changed

PAGE_SIZE_DEFAULT = 20
PAGE_SIZE_MIN = 10
PAGE_SIZE_MAX = 50
LIST_PARAMETERS = frozenset(
    {
        "mp_order_numbers",
        "fulfillment_status",
        "imported_after",
        "seller_updated_after",
        "has_errors",
        "page_size",
        "cursor",
    }
)
_PAGE_SIZE = re.compile(r"^[0-9]{1,3}$")


def _not_found(mp_order_number: str) -> JsonResponse:
    return error_response("not_found", f"order {mp_order_number!r} not found", 404)


def _bad_body(exc: Exception) -> JsonResponse | None:
    return validation_error(str(exc), {"": str(exc)}) if isinstance(exc, BadBody) else None


ERRORS = ErrorShape(
    method_not_allowed=method_not_allowed, query_refused=query_refused, answer=_bad_body
)


def _own_order(grant: Grant, mp_order_number: str) -> Order | None:
    return Order.objects.filter(
        client_id=grant.client_id, seller_id=grant.seller_id, mp_order_number=mp_order_number
    ).first()


@endpoint(methods=("GET", "PUT"), errors=ERRORS, auth=bearer_grant)
def order_detail(request: HttpRequest, grant: Grant, mp_order_number: str) -> JsonResponse:
    if request.method == "GET":
        order = _own_order(grant, mp_order_number)
        return JsonResponse(order_json(order)) if order else _not_found(mp_order_number)
    body = json_body(request)
    if isinstance(body, dict):
        _count_off_wire(request, grant, dates_off_wire(body), body)
    problems = order_problems(body, path_number=mp_order_number)
    if problems:
        return validation_error("the order is invalid", dict(problems))
    assert isinstance(body, dict)  # order_problems refuses anything else
    try:
        return _order_put(request, grant, mp_order_number, body)
    except IntegrityError:
        # A concurrent PUT created it first (Postgres): now it is an update.
        return _order_put(request, grant, mp_order_number, body)


def _order_put(
    request: HttpRequest, grant: Grant, mp_order_number: str, body: dict
) -> JsonResponse:
    now = clock.now()
    state = body["marketplace_state"]
    with transaction.atomic():
        order = _own_order(grant, mp_order_number)
        if order is None:
            order = Order.objects.create(
                client_id=grant.client_id,
                seller_id=grant.seller_id,
                mp_order_number=mp_order_number,
                placed=body,
                marketplace_state=state,
                imported_at=now,
                updated_at=now,
                sort_at=now,
            )
            _record_state(order, state, now, request)
            _check_shipped(order, grant, request, previous_state=None)
            return JsonResponse(order_json(order), status=201)
        changed = changed_paths(order.placed, body)
        if changed:
            return validation_error(
                "only marketplace_state, the ship/delivery windows and delivery_notes may change",
                {path: "cannot change after the order is placed" for path in changed},
            )
        problem = transition_problem(order.marketplace_state, state)
        if problem:
            return validation_error(problem, {"marketplace_state": problem})
        if order.placed != body:
            previous_state = order.marketplace_state
            state_changed = state != order.marketplace_state
            if state_changed:
                _record_state(order, state, now, request)
            order.placed = body
            order.marketplace_state = state
            order.updated_at = now
            order.save(update_fields=["placed", "marketplace_state", "updated_at"])
            if state_changed:
                # The seller's v2 order (if imported) sees the new state at once.
                marketplace_state_changed(order, state, now)
            _check_shipped(order, grant, request, previous_state=previous_state)
        return JsonResponse(order_json(order), status=200)


def _record_state(order: Order, state: str, at: datetime, request: HttpRequest) -> None:
    OrderStateChange.objects.create(
        order=order, state=state, at=at, request_id=getattr(request, "sandbox_request_id", "")
    )


def _check_shipped(
    order: Order, grant: Grant, request: HttpRequest, *, previous_state: str | None
) -> None:
    """Count a move to SHIPPED while a line still waits for the seller (accepted: the
    contract does not say the platform refuses it, only that SHIPPED comes after the
    seller's fulfillments)."""
    if order.marketplace_state != "SHIPPED" or previous_state == "SHIPPED":
        return
    waiting = [
        f"{s['mp_line_number']} ({s['pending']['quantity']} pending)"
        for s in line_summaries(order)
        if s["pending"]["quantity"] > 0
    ]
    if waiting:
        violations.violation_record(
            kind=violations.SHIPPED_WHILE_UNFULFILLED,
            seller=grant.seller.username,
            client_id=grant.client.client_id,
            request_id=getattr(request, "sandbox_request_id", ""),
            detail=f"order {order.mp_order_number} SHIPPED with lines {', '.join(waiting)}",
        )


def _count_off_wire(
    request: HttpRequest, grant: Grant, keys: list[str], values: dict[str, Any]
) -> None:
    """A ``date_format`` violation for each date-time sent in another form than
    ``YYYY-MM-DDTHH:MM:SSZ`` (refused under reading A, taken under B)."""
    for key in keys:
        violations.violation_record(
            kind=violations.DATE_FORMAT,
            seller=grant.seller.username,
            client_id=grant.client.client_id,
            request_id=getattr(request, "sandbox_request_id", ""),
            detail=f"{request.method} {request.path}: {key} sent as {str(values.get(key))[:60]!r}",
        )


def _list_filters(
    params: dict[str, str], fields: dict[str, str], off_wire: list[str] | None = None
) -> tuple[Q, int]:
    """The listing's query and page size; ``fields`` gets the refused parameters and
    ``off_wire`` the date-times not sent as ``YYYY-MM-DDTHH:MM:SSZ``."""
    off_wire = [] if off_wire is None else off_wire
    query = Q()
    page_size = PAGE_SIZE_DEFAULT
    if "page_size" in params:
        raw = params["page_size"]
        page_size = int(raw) if _PAGE_SIZE.match(raw) else -1
        if not PAGE_SIZE_MIN <= page_size <= PAGE_SIZE_MAX:
            fields["page_size"] = f"must be an integer from {PAGE_SIZE_MIN} to {PAGE_SIZE_MAX}"
    if "mp_order_numbers" in params:
        numbers = params["mp_order_numbers"].split(",")
        cap = order_numbers_cap()
        if any(not n or len(n) > 128 for n in numbers) or len(numbers) > cap:
            fields["mp_order_numbers"] = (
                f"comma-separated order numbers (1-128 characters, at most {cap})"
            )
        query &= Q(mp_order_number__in=numbers)
    if "fulfillment_status" in params:
        statuses = params["fulfillment_status"].split(",")
        if any(s not in FILTER_NAMES for s in statuses):
            fields["fulfillment_status"] = f"comma-separated values of {', '.join(FILTER_NAMES)}"
        query &= Q(fulfillment_status__in=statuses)
    # "On or after" (reference, …/orders/get-orders); a time without a zone is read in
    # America/New_York (under the lenient reading of date_format; refused under A).
    for key, lookup in (
        ("imported_after", "imported_at__gte"),
        ("seller_updated_after", "seller_updated_at__gte"),
    ):
        if key in params:
            sent = sent_datetime(params[key], zone_less=NEW_YORK)
            if not sent.exact:
                off_wire.append(key)
            if sent.moment is None:
                fields[key] = f"{sent.problem} (URL-encode a '+')"
            else:
                query &= Q(**{lookup: sent.moment})
    if "has_errors" in params:
        value = params["has_errors"]
        if value not in ("true", "false"):
            fields["has_errors"] = "must be true or false"
        query &= Q(has_errors=value == "true")
    if "cursor" in params:
        decoded = cursor_decode(params["cursor"])
        if decoded is None:
            fields["cursor"] = "not a cursor this endpoint returned"
        else:
            sort_at, order_id = decoded
            query &= Q(sort_at__gt=sort_at) | Q(sort_at=sort_at, id__gt=order_id)
    return query, page_size


# Not CSRF-exempt (as before): a POST here meets Django's CSRF check before the 405.
@endpoint(
    methods=("GET",),
    errors=ERRORS,
    auth=bearer_grant,
    parameters=LIST_PARAMETERS,
    pass_params=True,
    csrf_exempt=False,
)
def orders_list(request: HttpRequest, grant: Grant, params: dict[str, str]) -> JsonResponse:
    fields: dict[str, str] = {}
    off_wire: list[str] = []
    query, page_size = _list_filters(params, fields, off_wire)
    _count_off_wire(request, grant, off_wire, params)
    over_page_count(request, grant, params)
    if fields:
        return validation_error(f"invalid query: {problems_message(fields)}", fields)
    refused = unknown_refusal(grant, params)
    if refused is not None:
        return refused
    rows = list(
        Order.objects.filter(query, client_id=grant.client_id, seller_id=grant.seller_id).order_by(
            "sort_at", "id"
        )[: page_size + 1]
    )
    page, more = rows[:page_size], len(rows) > page_size
    last_page = "" if switches.reading_b("next_cursor_last") else None
    return JsonResponse(
        {
            "orders": [order_json(order) for order in page],
            "next_cursor": cursor_encode(page[-1].sort_at, page[-1].id) if more else last_page,
        }
    )


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, csrf_exempt=False)
def order_fulfillments(request: HttpRequest, grant: Grant, mp_order_number: str) -> JsonResponse:
    order = _own_order(grant, mp_order_number)
    return JsonResponse(fulfillments_json(order)) if order else _not_found(mp_order_number)


@endpoint(methods=("POST",), errors=ERRORS, auth=bearer_grant)
def order_errors(request: HttpRequest, grant: Grant, mp_order_number: str) -> JsonResponse:
    order = _own_order(grant, mp_order_number)
    if order is None:
        return _not_found(mp_order_number)
    body = json_body(request)
    problems = error_report_problems(body)
    if problems:
        return validation_error("the error report is invalid", dict(problems))
    assert isinstance(body, list)  # error_report_problems refuses anything else
    now = clock.now()
    request_id = getattr(request, "sandbox_request_id", "")
    with transaction.atomic():
        ErrorReport.objects.bulk_create(
            ErrorReport(
                order=order,
                code=item["code"],
                message=item["message"],
                mp_line_number=item.get("mp_line_number") or "",
                debug=item.get("debug"),
                received_at=now,
                request_id=request_id,
            )
            for item in body
        )
        Order.objects.filter(id=order.id).update(has_errors=True)
    return JsonResponse({})
