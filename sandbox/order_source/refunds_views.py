"""Seller refunds on the marketplace-facing interface (returns-refunds-contract.md):
``GET /refunds``, ``GET /orders/{n}/refunds``, ``GET /orders/{n}/refunds/{id}``,
``POST …/refunds/{id}/complete`` and ``…/errors``. The seller posts them through v2."""

from datetime import datetime
from typing import Any

from django.db.models import Q
from django.http import HttpRequest, JsonResponse

from sandbox.common import violations
from sandbox.common.endpoint import Refusal, endpoint
from sandbox.common.json_bodies import error_response
from sandbox.order_source.after_sale_answers import conflict, violation
from sandbox.order_source.after_sale_flow import (
    AfterSale,
    complete_marked,
    errors_taken,
    listing_answer,
    order_rows_answer,
    own_order,
)
from sandbox.order_source.after_sale_query import iso_moment, listing_filters
from sandbox.order_source.bearer import bearer_grant
from sandbox.order_source.order_views import ERRORS
from sandbox.order_source.returns_validation import REFUND_ERROR_CODES
from sandbox.records.orders.after_sale import changed, mark_read, refund_json
from sandbox.records.orders.models import Grant, Refund

REFUNDS = AfterSale[Refund](
    key="refunds",
    done=Refund.COMPLETE,
    to_json=refund_json,
    codes=REFUND_ERROR_CODES,
    line_key=None,
)
LIST_PARAMETERS = frozenset(
    {"mp_order_numbers", "refund_status", "created_after", "created_before", "page_size", "cursor"}
)


def _filters(params: dict[str, str], fields: dict[str, str]) -> tuple[Q, int]:
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
    return listing_answer(
        request,
        grant,
        REFUNDS,
        allowed=LIST_PARAMETERS,
        filters=_filters,
        rows=Refund.objects.all(),
    )


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, csrf_exempt=False)
def order_refunds(request: HttpRequest, grant: Grant, mp_order_number: str) -> JsonResponse:
    return order_rows_answer(grant, mp_order_number, REFUNDS)


def _own_refund(grant: Grant, mp_order_number: str, refund_id: str) -> Refund:
    """The refund of the caller's order, or a finished 404."""
    row = (
        own_order(grant, mp_order_number)
        .refunds.select_related("order")
        .filter(id=int(refund_id) if refund_id.isdigit() and len(refund_id) < 19 else -1)
        .first()
    )
    if row is None:
        raise Refusal(error_response("not_found", f"refund {refund_id!r} not found", 404))
    return row


@endpoint(methods=("GET",), errors=ERRORS, auth=bearer_grant, csrf_exempt=False)
def refund_detail(
    request: HttpRequest, grant: Grant, mp_order_number: str, refund_id: str
) -> JsonResponse:
    row = _own_refund(grant, mp_order_number, refund_id)
    mark_read([row])
    return JsonResponse(refund_json(row))


@endpoint(methods=("POST",), errors=ERRORS, auth=bearer_grant)
def refund_complete(
    request: HttpRequest, grant: Grant, mp_order_number: str, refund_id: str
) -> JsonResponse:
    def refusal(row: Refund) -> JsonResponse | None:
        if row.status != Refund.PAUSED:
            return None
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

    label = f"refund {refund_id} of order {mp_order_number}"
    return complete_marked(
        request,
        grant,
        _own_refund(grant, mp_order_number, refund_id),
        REFUNDS,
        label=label,
        refusal=refusal,
        unread="marked complete without reading it",
    )


@endpoint(methods=("POST",), errors=ERRORS, auth=bearer_grant)
def refund_errors(
    request: HttpRequest, grant: Grant, mp_order_number: str, refund_id: str
) -> JsonResponse:
    def take(row: Refund, items: list[dict[str, Any]], now: datetime) -> None:
        if row.status == Refund.CREATED and row.history and row.history[-1]["errors"] == items:
            violation(
                request,
                grant,
                violations.REFUND_ERRORS_AFTER_CORRECTION,
                f"errors reported on {label} after the seller corrected it, the same as paused "
                "its previous version (read the refund before reporting)",
            )
        refund_pause(row, items, now)

    label = f"refund {refund_id} of order {mp_order_number}"
    return errors_taken(
        request,
        grant,
        _own_refund(grant, mp_order_number, refund_id),
        REFUNDS,
        label=label,
        name=f"refund {refund_id}",
        line_numbers=set(),
        take=take,
    )


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
