"""Seller refunds on the marketplace-facing interface (returns-refunds-contract.md):
``GET /refunds``, ``GET /orders/{n}/refunds``, ``GET /orders/{n}/refunds/{id}``,
``POST …/refunds/{id}/complete`` and ``…/errors``. The seller posts them through v2."""

from django.db import transaction
from django.http import HttpRequest, JsonResponse

from sandbox.common import clock, violations
from sandbox.common.endpoint import endpoint
from sandbox.common.errors import validation_error
from sandbox.common.json_bodies import error_response, json_body
from sandbox.common.query_params import problems_message
from sandbox.order_source.after_sale import changed, mark_read, refund_json
from sandbox.order_source.bearer import bearer_grant
from sandbox.order_source.models import Grant, Refund
from sandbox.order_source.order_views import ERRORS, _not_found, _own_order
from sandbox.order_source.returns_validation import (
    REFUND_ERROR_CODES,
    error_array_problems,
    error_items,
)
from sandbox.order_source.returns_views import (
    LIST_PARAMETERS,
    _conflict,
    _empty_object_body,
    _violation,
    complete_answer,
    listing_filters,
    listing_page,
)


@endpoint(
    methods=("GET",),
    errors=ERRORS,
    auth=bearer_grant,
    parameters=LIST_PARAMETERS,
    pass_params=True,
    csrf_exempt=False,
)
def refunds_list(request: HttpRequest, grant: Grant, params: dict[str, str]) -> JsonResponse:
    fields: dict[str, str] = {}
    query, page_size = listing_filters(params, Refund.STATUSES, fields)
    if fields:
        return validation_error(f"invalid query: {problems_message(fields)}", fields)
    page, cursor = listing_page(Refund.objects.all(), query, grant, page_size)
    return JsonResponse({"refunds": [refund_json(row) for row in page], "next_cursor": cursor})


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
    _empty_object_body(request)
    label = f"refund {refund_id} of order {mp_order_number}"
    with transaction.atomic():
        row = Refund.objects.select_for_update().select_related("order").get(id=row.id)
        if row.status == Refund.COMPLETED:
            return complete_answer(refund_json(row))
        if row.status == Refund.REFUSED:
            _violation(
                request,
                grant,
                violations.COMPLETE_AND_ERRORS,
                f"{label} marked complete after errors were reported on it",
            )
            return _conflict(f"refund {refund_id} is REFUSED: it cannot be completed")
        if not row.read_in_state:
            _violation(
                request,
                grant,
                violations.COMPLETE_UNREAD,
                f"{label} marked complete without reading it",
            )
        row.status = Refund.COMPLETED
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
        if row.status == Refund.COMPLETED:
            _violation(
                request,
                grant,
                violations.COMPLETE_AND_ERRORS,
                f"errors reported on {label}, already marked complete",
            )
            return _conflict(f"refund {refund_id} is COMPLETED: no errors now")
        new = [item for item in items if item not in row.errors]
        if new:  # the same body again (a retry after a lost answer) changes nothing
            row.errors = [*row.errors, *new]
            became_refused = row.status != Refund.REFUSED
            row.status = Refund.REFUSED
            changed(row, clock.now(), fields=["errors", "status"], new_state=became_refused)
    return JsonResponse({})
