"""Returns on the marketplace-facing interface (returns-refunds-contract.md):
``PUT/GET /orders/{n}/returns/{r}``, ``GET /orders/{n}/returns``, ``GET /returns``,
``GET …/returns/{r}/refunds``, ``POST …/returns/{r}/complete`` and ``…/errors``.

Scoped like the orders: a marketplace sees the returns of the orders it placed for the
seller who granted its token; anything else is 404.
"""

from django.db import IntegrityError, transaction
from django.http import HttpRequest, JsonResponse

from sandbox.common import clock, switches, violations
from sandbox.common.endpoint import endpoint
from sandbox.common.errors import validation_error
from sandbox.common.json_bodies import error_response, json_body
from sandbox.order_source.after_sale_answers import (
    complete_answer,
    conflict,
    empty_object_body,
    order_number_refused,
    violation,
)
from sandbox.order_source.after_sale_query import (
    last_cursor,
    listing_filters,
    listing_page,
    refused_query,
    strict_params,
)
from sandbox.order_source.bearer import bearer_grant
from sandbox.order_source.order_views import (
    ERRORS,
    _not_found,
    _own_order,
)
from sandbox.order_source.returns_validation import (
    RETURN_ERROR_CODES,
    error_array_problems,
    error_items,
    lines_against_order,
    return_problems,
)
from sandbox.records.orders.after_sale import (
    changed,
    mark_read,
    return_json,
    return_refunds_json,
    returned_quantities,
    shipped_quantities,
)
from sandbox.records.orders.models import Grant, Order, Return

LIST_PARAMETERS = frozenset({"mp_order_numbers", "status", "updated_after", "page_size", "cursor"})


def _return_not_found(mp_return_number: str) -> JsonResponse:
    return error_response("not_found", f"return {mp_return_number!r} not found", 404)


def _own_return(grant: Grant, mp_order_number: str, mp_return_number: str) -> Return | None:
    return (
        Return.objects.select_related("order")
        .filter(
            order__client_id=grant.client_id,
            order__seller_id=grant.seller_id,
            order__mp_order_number=mp_order_number,
            mp_return_number=mp_return_number,
        )
        .first()
    )


@endpoint(methods=("GET", "PUT"), errors=ERRORS, auth=bearer_grant)
def return_detail(
    request: HttpRequest, grant: Grant, mp_order_number: str, mp_return_number: str
) -> JsonResponse:
    if request.method == "GET":
        row = _own_return(grant, mp_order_number, mp_return_number)
        if row is None:
            if _own_order(grant, mp_order_number) is None:
                return _not_found(mp_order_number)
            return _return_not_found(mp_return_number)
        mark_read([row])
        return JsonResponse(return_json(row))
    if len(mp_return_number) > 128:
        return validation_error(
            "the return number is too long",
            {"mp_return_number": "at most 128 characters"},
        )
    if _own_order(grant, mp_order_number) is None:
        return _not_found(mp_order_number)
    body = json_body(request)
    problems = return_problems(body)
    if problems:
        return validation_error("the return is invalid", dict(problems))
    assert isinstance(body, dict)
    refused = order_number_refused(request, grant, mp_order_number, body)
    if refused is not None:
        return refused
    try:
        return _return_put(request, grant, mp_order_number, mp_return_number, body)
    except IntegrityError:
        # A concurrent PUT created it first: now it is a repeat or an update.
        return _return_put(request, grant, mp_order_number, mp_return_number, body)


def _return_put(
    request: HttpRequest, grant: Grant, mp_order_number: str, mp_return_number: str, body: dict
) -> JsonResponse:
    now = clock.now()
    with transaction.atomic():
        # One writer per order at a time: the over-return check reads the other returns.
        order = Order.objects.select_for_update().get(
            client_id=grant.client_id, seller_id=grant.seller_id, mp_order_number=mp_order_number
        )
        row = order.returns.filter(mp_return_number=mp_return_number).first()
        if row is not None and row.placed == body:
            return JsonResponse(return_json(row))
        if row is not None and row.status != Return.AWAITING_AUTHORIZATION:
            violation(
                request,
                grant,
                violations.RETURN_CHANGED_AFTER_AUTHORIZATION,
                f"return {mp_return_number} of order {mp_order_number} sent again with a "
                f"different body while {row.status}",
            )
            return conflict(f"return {mp_return_number!r} is {row.status}: it can no longer change")
        problems = lines_against_order(
            body,
            order.placed,
            shipped_quantities(order),
            returned_quantities(order, excluding=row.id if row else None),
        )
        if problems:
            return validation_error("the return does not fit the order", dict(problems))
        if row is None:
            row = Return.objects.create(
                order=order,
                mp_return_number=mp_return_number,
                placed=body,
                created_at=now,
                updated_at=now,
                state_changed_at=now,
            )
        else:
            row.placed = body
            changed(row, now, fields=["placed"], new_state=False)
        return JsonResponse(return_json(row))


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, csrf_exempt=False)
def order_returns(request: HttpRequest, grant: Grant, mp_order_number: str) -> JsonResponse:
    order = _own_order(grant, mp_order_number)
    if order is None:
        return _not_found(mp_order_number)
    rows = list(order.returns.select_related("order").order_by("id"))
    mark_read(rows)
    return JsonResponse({"returns": [return_json(row) for row in rows], "next_cursor": None})


def listed_statuses() -> tuple[str, ...]:
    """The states a returns listing may ask for: the reference's four (reading A of
    ``return_refusal``), or with ``REJECTED`` (B)."""
    if switches.reading_b("return_refusal"):
        return Return.STATUSES
    return tuple(s for s in Return.STATUSES if s != Return.REJECTED)


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, parameters=None, csrf_exempt=False)
def returns_list(request: HttpRequest, grant: Grant) -> JsonResponse:
    params, fields = strict_params(request, LIST_PARAMETERS)
    if fields:
        return refused_query(request, grant, fields)
    query, page_size = listing_filters(params, listed_statuses(), fields)
    if fields:
        return refused_query(request, grant, fields)
    page, cursor = listing_page(Return.objects.all(), query, grant, page_size)
    return JsonResponse(
        {"returns": [return_json(row) for row in page], "next_cursor": last_cursor(cursor)}
    )


def _found(
    grant: Grant, mp_order_number: str, mp_return_number: str
) -> tuple[Return | None, JsonResponse | None]:
    row = _own_return(grant, mp_order_number, mp_return_number)
    if row is not None:
        return row, None
    if _own_order(grant, mp_order_number) is None:
        return None, _not_found(mp_order_number)
    return None, _return_not_found(mp_return_number)


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, csrf_exempt=False)
def return_refunds(
    request: HttpRequest, grant: Grant, mp_order_number: str, mp_return_number: str
) -> JsonResponse:
    row, missing = _found(grant, mp_order_number, mp_return_number)
    if row is None:
        assert missing is not None
        return missing
    mark_read([row])
    return JsonResponse(return_refunds_json(row))


@endpoint(methods=("POST",), errors=ERRORS, auth=bearer_grant)
def return_complete(
    request: HttpRequest, grant: Grant, mp_order_number: str, mp_return_number: str
) -> JsonResponse:
    row, missing = _found(grant, mp_order_number, mp_return_number)
    if row is None:
        assert missing is not None
        return missing
    empty_object_body(request)
    label = f"return {mp_return_number} of order {mp_order_number}"
    with transaction.atomic():
        row = Return.objects.select_for_update().select_related("order").get(id=row.id)
        if row.status == Return.COMPLETED:
            return complete_answer(return_json(row))
        if row.status != Return.REFUNDED:
            violation(
                request,
                grant,
                violations.RETURN_COMPLETE_NOT_REFUNDED,
                f"{label} marked complete while {row.status}",
            )
            return conflict(f"return {mp_return_number!r} is {row.status}, not REFUNDED")
        if row.errors:
            violation(
                request,
                grant,
                violations.COMPLETE_AND_ERRORS,
                f"{label} marked complete after errors were reported on it",
            )
            return conflict(f"return {mp_return_number!r} has errors reported: not complete")
        if not row.read_in_state:
            violation(
                request,
                grant,
                violations.COMPLETE_UNREAD,
                f"{label} marked complete without reading it since it was REFUNDED",
            )
        row.status = Return.COMPLETED
        changed(row, clock.now(), fields=["status"], new_state=True)
    return complete_answer(return_json(row))


@endpoint(methods=("POST",), errors=ERRORS, auth=bearer_grant)
def return_errors(
    request: HttpRequest, grant: Grant, mp_order_number: str, mp_return_number: str
) -> JsonResponse:
    row, missing = _found(grant, mp_order_number, mp_return_number)
    if row is None:
        assert missing is not None
        return missing
    body = json_body(request)
    numbers = {str(line["mp_return_line_number"]) for line in row.placed["return_lines"]}
    problems = error_array_problems(
        body, RETURN_ERROR_CODES, line_key="mp_return_line_number", line_numbers=numbers
    )
    if problems:
        return validation_error("the error report is invalid", dict(problems))
    assert isinstance(body, list)
    items = error_items(body, line_key="mp_return_line_number")
    label = f"return {mp_return_number} of order {mp_order_number}"
    with transaction.atomic():
        row = Return.objects.select_for_update().select_related("order").get(id=row.id)
        if row.status == Return.COMPLETED:
            violation(
                request,
                grant,
                violations.COMPLETE_AND_ERRORS,
                f"errors reported on {label}, already marked complete",
            )
            return conflict(f"return {mp_return_number!r} is COMPLETED: no errors now")
        if row.status != Return.REFUNDED:
            return conflict(
                f"return {mp_return_number!r} is {row.status}: errors only once REFUNDED"
            )
        new = [item for item in items if item not in row.errors]
        if new:  # the same body again (a retry after a lost answer) changes nothing
            row.errors = [*row.errors, *new]
            changed(row, clock.now(), fields=["errors"], new_state=False)
    return JsonResponse({})
