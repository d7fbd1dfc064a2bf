"""The steps the returns and refunds views share: the caller's order (or a 404), an
order's rows, the listing, and the two verdicts a marketplace gives, ``complete`` and
``errors``, each under a row lock with its repeat, its refusals and its violations.

What differs between a return and a refund is handed in: what it is (``AfterSale``: its
final state, JSON, error codes), what else refuses a completion, what errors do to it."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest, JsonResponse

from sandbox.common import clock, violations
from sandbox.common.endpoint import Refusal
from sandbox.common.errors import validation_error
from sandbox.common.json_bodies import json_body
from sandbox.order_source.after_sale_answers import (
    complete_answer,
    conflict,
    empty_object_body,
    violation,
)
from sandbox.order_source.after_sale_query import (
    last_cursor,
    listing_page,
    refused_query,
    strict_params,
)
from sandbox.order_source.order_numbers import over_page_count
from sandbox.order_source.order_views import _not_found, _own_order
from sandbox.order_source.returns_validation import error_array_problems, error_items
from sandbox.records.orders.after_sale import changed, mark_read
from sandbox.records.orders.models import Grant, Order, Refund, Return

Row = TypeVar("Row", Return, Refund)


@dataclass(frozen=True)
class AfterSale(Generic[Row]):
    """What a return or a refund is to these steps."""

    key: str  # the order's related name, and the key of a list's answer
    done: str  # the final state, set by ``complete``
    to_json: Callable[[Row], dict[str, Any]]
    codes: tuple[str, ...]  # the codes its ``errors`` call takes
    line_key: str | None  # the line an error names, if any


def own_order(grant: Grant, mp_order_number: str) -> Order:
    """The caller's order, or a finished 404 (``Refusal``, answered by the endpoint)."""
    order = _own_order(grant, mp_order_number)
    if order is None:
        raise Refusal(_not_found(mp_order_number))
    return order


def order_rows_answer(grant: Grant, mp_order_number: str, kind: AfterSale[Row]) -> JsonResponse:
    """``GET /orders/{n}/returns`` or ``…/refunds``: all of them, read by this call."""
    order = own_order(grant, mp_order_number)
    rows = list(getattr(order, kind.key).select_related("order").order_by("id"))
    mark_read(rows)
    return JsonResponse({kind.key: [kind.to_json(row) for row in rows], "next_cursor": None})


def listing_answer(
    request: HttpRequest,
    grant: Grant,
    kind: AfterSale[Row],
    *,
    allowed: frozenset[str],
    filters: Callable[[dict[str, str], dict[str, str]], tuple[Q, int]],
    rows: QuerySet[Row],
) -> JsonResponse:
    """``GET /returns`` or ``GET /refunds``: the strict query (refused whole, naming each
    problem), the grant's page of ``rows`` (read by this call), and the next cursor."""
    params, fields = strict_params(request, allowed)
    if fields:
        return refused_query(request, grant, fields)
    over_page_count(request, grant, params)
    query, page_size = filters(params, fields)
    if fields:
        return refused_query(request, grant, fields)
    page, cursor = listing_page(rows, query, grant, page_size)
    return JsonResponse(
        {kind.key: [kind.to_json(row) for row in page], "next_cursor": last_cursor(cursor)}
    )


def _locked(row: Row) -> Row:
    return type(row).objects.select_for_update().select_related("order").get(id=row.id)


def complete_marked(
    request: HttpRequest,
    grant: Grant,
    row: Row,
    kind: AfterSale[Row],
    *,
    label: str,
    refusal: Callable[[Row], JsonResponse | None],
    unread: str,
) -> JsonResponse:
    """``complete``: ``{}`` as body; a repeat answers the same; ``refusal`` says what else
    refuses it (a 409 with its violation); completing what the caller has not read in its
    state is counted (``unread``: how the violation ends), not refused."""
    empty_object_body(request)
    with transaction.atomic():
        row = _locked(row)
        if row.status == kind.done:
            return complete_answer(kind.to_json(row))
        refused = refusal(row)
        if refused is not None:
            return refused
        if not row.read_in_state:
            violation(request, grant, violations.COMPLETE_UNREAD, f"{label} {unread}")
        row.status = kind.done
        changed(row, clock.now(), fields=["status"], new_state=True)
    return complete_answer(kind.to_json(row))


def errors_taken(
    request: HttpRequest,
    grant: Grant,
    row: Row,
    kind: AfterSale[Row],
    *,
    label: str,
    name: str,
    line_numbers: set[str],
    take: Callable[[Row, list[dict[str, Any]], datetime], JsonResponse | None],
) -> JsonResponse:
    """``errors``: the array checked (400 naming each problem); none on a completed row
    (409, counted); ``take`` applies them to the locked row (or answers a refusal)."""
    body = json_body(request)
    problems = error_array_problems(
        body, kind.codes, line_key=kind.line_key, line_numbers=line_numbers
    )
    if problems:
        return validation_error("the error report is invalid", dict(problems))
    assert isinstance(body, list)
    items = error_items(body, line_key=kind.line_key)
    with transaction.atomic():
        row = _locked(row)
        if row.status == kind.done:
            violation(
                request,
                grant,
                violations.COMPLETE_AND_ERRORS,
                f"errors reported on {label}, already marked complete",
            )
            return conflict(f"{name} is {kind.done}: no errors now")
        refused = take(row, items, clock.now())
        if refused is not None:
            return refused
    return JsonResponse({})
