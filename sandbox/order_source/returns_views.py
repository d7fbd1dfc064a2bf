"""Returns on the marketplace-facing interface (returns-refunds-contract.md):
``PUT/GET /orders/{n}/returns/{r}``, ``GET /orders/{n}/returns``, ``GET /returns``,
``GET …/returns/{r}/refunds``, ``POST …/returns/{r}/complete`` and ``…/errors``.

Scoped like the orders: a marketplace sees the returns of the orders it placed for the
seller who granted its token; anything else is 404.
"""

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.http import HttpRequest, JsonResponse

from sandbox.common import clock, switches, violations
from sandbox.common.endpoint import Refusal, endpoint
from sandbox.common.errors import validation_error
from sandbox.common.json_bodies import error_response, json_body
from sandbox.order_source.after_sale_answers import conflict, order_number_refused, violation
from sandbox.order_source.after_sale_flow import (
    AfterSale,
    complete_marked,
    errors_taken,
    listing_answer,
    order_rows_answer,
    own_order,
)
from sandbox.order_source.after_sale_query import listing_filters
from sandbox.order_source.bearer import bearer_grant
from sandbox.order_source.order_views import ERRORS
from sandbox.order_source.returns_validation import (
    RETURN_ERROR_CODES,
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

RETURNS = AfterSale[Return](
    key="returns",
    done=Return.COMPLETED,
    to_json=return_json,
    codes=RETURN_ERROR_CODES,
    line_key="mp_return_line_number",
)
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


def _found(grant: Grant, mp_order_number: str, mp_return_number: str) -> Return:
    """The return of the caller's order, or a finished 404 (of the order, or the return)."""
    row = _own_return(grant, mp_order_number, mp_return_number)
    if row is not None:
        return row
    own_order(grant, mp_order_number)
    raise Refusal(_return_not_found(mp_return_number))


@endpoint(methods=("GET", "PUT"), errors=ERRORS, auth=bearer_grant)
def return_detail(
    request: HttpRequest, grant: Grant, mp_order_number: str, mp_return_number: str
) -> JsonResponse:
    if request.method == "GET":
        row = _found(grant, mp_order_number, mp_return_number)
        mark_read([row])
        return JsonResponse(return_json(row))
    if len(mp_return_number) > 128:
        return validation_error(
            "the return number is too long",
            {"mp_return_number": "at most 128 characters"},
        )
    own_order(grant, mp_order_number)
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
    return order_rows_answer(grant, mp_order_number, RETURNS)


def listed_statuses() -> tuple[str, ...]:
    """The states a returns listing may ask for: the reference's four (reading A of
    ``return_refusal``), or with ``REJECTED`` (B)."""
    if switches.reading_b("return_refusal"):
        return Return.STATUSES
    return tuple(s for s in Return.STATUSES if s != Return.REJECTED)


def _filters(params: dict[str, str], fields: dict[str, str]) -> tuple[Q, int]:
    return listing_filters(params, listed_statuses(), fields)


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, parameters=None, csrf_exempt=False)
def returns_list(request: HttpRequest, grant: Grant) -> JsonResponse:
    return listing_answer(
        request,
        grant,
        RETURNS,
        allowed=LIST_PARAMETERS,
        filters=_filters,
        rows=Return.objects.all(),
    )


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, csrf_exempt=False)
def return_refunds(
    request: HttpRequest, grant: Grant, mp_order_number: str, mp_return_number: str
) -> JsonResponse:
    row = _found(grant, mp_order_number, mp_return_number)
    mark_read([row])
    return JsonResponse(return_refunds_json(row))


@endpoint(methods=("POST",), errors=ERRORS, auth=bearer_grant)
def return_complete(
    request: HttpRequest, grant: Grant, mp_order_number: str, mp_return_number: str
) -> JsonResponse:
    def refusal(row: Return) -> JsonResponse | None:
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
        return None

    label = f"return {mp_return_number} of order {mp_order_number}"
    return complete_marked(
        request,
        grant,
        _found(grant, mp_order_number, mp_return_number),
        RETURNS,
        label=label,
        refusal=refusal,
        unread="marked complete without reading it since it was REFUNDED",
    )


@endpoint(methods=("POST",), errors=ERRORS, auth=bearer_grant)
def return_errors(
    request: HttpRequest, grant: Grant, mp_order_number: str, mp_return_number: str
) -> JsonResponse:
    def take(row: Return, items: list[dict[str, Any]], now: datetime) -> JsonResponse | None:
        if row.status != Return.REFUNDED:
            return conflict(
                f"return {mp_return_number!r} is {row.status}: errors only once REFUNDED"
            )
        new = [item for item in items if item not in row.errors]
        if new:  # the same body again (a retry after a lost answer) changes nothing
            row.errors = [*row.errors, *new]
            changed(row, now, fields=["errors"], new_state=False)
        return None

    row = _found(grant, mp_order_number, mp_return_number)
    return errors_taken(
        request,
        grant,
        row,
        RETURNS,
        label=f"return {mp_return_number} of order {mp_order_number}",
        name=f"return {mp_return_number!r}",
        line_numbers={str(line["mp_return_line_number"]) for line in row.placed["return_lines"]},
        take=take,
    )
