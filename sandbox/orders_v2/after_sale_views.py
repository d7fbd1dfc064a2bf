"""Returns and refunds on the seller-side API v2 (returns-refunds-contract.md, "The seller's
side"): ``POST/GET /orders/{id}/refunds``, ``GET /orders/{id}/refunds/{rid}``,
``GET /returns`` (the reference's ``marketplace_state``, ``marketplace_state_changed_after``
/ ``_before``, ``imported_after`` / ``_before``, ``normalized_marketplace_state``; our
``order_id``, ``limit``, ``cursor``), ``GET /returns/{id}``,
``POST /returns/{id}/refunds`` (the return's refund) and
``POST /returns/{id}/run-operation?op=authorize|reject``. Read as strictly as the rest of v2."""

import re

from django.db.models import Q
from django.http import HttpRequest, JsonResponse

from sandbox.common import switches
from sandbox.common.errors import query_refused
from sandbox.common.json_bodies import json_body
from sandbox.orders_v2 import refunds, return_refunds, returns
from sandbox.orders_v2.dates import strict_datetime
from sandbox.orders_v2.listing import LIMIT_DEFAULT, LIMIT_MAX, cursor_decode, cursor_encode
from sandbox.orders_v2.models import ApiUser, V2Order
from sandbox.orders_v2.packages import PackageError
from sandbox.orders_v2.views import _object_body, _own_order, v2_view
from sandbox.records.orders.models import Refund, Return

RETURN_PARAMETERS = frozenset(
    {
        "marketplace_state",
        "marketplace_state_changed_after",
        "marketplace_state_changed_before",
        "imported_after",
        "imported_before",
        "normalized_marketplace_state",
        "order_id",
        "limit",
        "cursor",
    }
)
# The reference: "after"/"before" this date-time (strictly), RFC 3339 without fractions.
_MOMENT_FILTERS = (
    ("marketplace_state_changed_after", "state_changed_at__gt"),
    ("marketplace_state_changed_before", "state_changed_at__lt"),
    ("imported_after", "created_at__gt"),
    ("imported_before", "created_at__lt"),
)
_DIGITS = re.compile(r"^[0-9]{1,18}$")


def _id(raw: str) -> int:
    return int(raw) if _DIGITS.match(raw) else -1


@v2_view(("GET", "POST"))
def order_refunds(request: HttpRequest, user: ApiUser, params: dict, order_id: str) -> JsonResponse:
    order = _own_order(user, order_id)
    if request.method == "GET":
        rows = Refund.objects.filter(order_id=order.order_id).order_by("id")
        # Reading B: the list under the key the reference's example shows.
        key = "cancellations" if switches.reading_b("v2_refunds_key") else "refunds"
        return JsonResponse({key: [refunds.refund_json(row) for row in rows]})
    row = refunds.refund_create(order, json_body(request))
    return JsonResponse(refunds.refund_json(row), status=201)


@v2_view(("GET",))
def order_refund(
    request: HttpRequest, user: ApiUser, params: dict, order_id: str, refund_id: str
) -> JsonResponse:
    order = _own_order(user, order_id)
    row = Refund.objects.filter(order_id=order.order_id, id=_id(refund_id)).first()
    if row is None:
        raise PackageError(404, f"refund {refund_id!r} not found")
    return JsonResponse(refunds.refund_json(row))


def _returns_filters(params: dict[str, str]) -> tuple[Q, int, dict[str, str]]:
    problems: dict[str, str] = {}
    query = Q()
    states = returns.allowed_states()
    if "marketplace_state" in params:
        values = params["marketplace_state"].split(",")
        if any(v not in states for v in values):
            problems["marketplace_state"] = f"comma-separated values of {', '.join(states)}"
        query &= Q(status__in=values)
    if "normalized_marketplace_state" in params:
        values = params["normalized_marketplace_state"].split(",")
        by_normalized = {returns.NORMALIZED_STATES[s]: s for s in states}
        if any(v not in by_normalized for v in values):
            problems["normalized_marketplace_state"] = (
                f"comma-separated values of {', '.join(by_normalized)}"
            )
        query &= Q(status__in=[by_normalized.get(v) for v in values])
    for key, lookup in _MOMENT_FILTERS:
        if key in params:
            moment = strict_datetime(params[key])
            if moment is None:
                problems[key] = (
                    "RFC 3339 date-time with an offset and no fractional seconds "
                    "(URL-encode the '+')"
                )
            else:
                query &= Q(**{lookup: moment})
    if "order_id" in params:
        ids = params["order_id"].split(",")
        if any(not _DIGITS.match(i) for i in ids) or len(ids) > 100:
            problems["order_id"] = "comma-separated order ids (digits, at most 100)"
        else:
            query &= Q(order__v2__id__in=[int(i) for i in ids])
    limit = LIMIT_DEFAULT
    if "limit" in params:
        raw = params["limit"]
        limit = int(raw) if _DIGITS.match(raw) else 0
        if not 1 <= limit <= LIMIT_MAX:
            problems["limit"] = f"an integer from 1 to {LIMIT_MAX}"
    if "cursor" in params:
        after = cursor_decode(params["cursor"])
        if after is None:
            problems["cursor"] = "not a cursor this endpoint returned (URL-encode it)"
        else:
            query &= Q(id__gt=after)
    return query, limit, problems


@v2_view(("GET",), parameters=RETURN_PARAMETERS)
def returns_list(request: HttpRequest, user: ApiUser, params: dict[str, str]) -> JsonResponse:
    query, limit, problems = _returns_filters(params)
    if problems:
        return query_refused(problems)
    rows = list(
        Return.objects.select_related("order")
        .filter(query, order__seller_id=user.seller_id)
        .order_by("id")[: limit + 1]
    )
    page, more = rows[:limit], len(rows) > limit
    v2_orders = {
        o.order_id: o for o in V2Order.objects.filter(order_id__in=[r.order_id for r in page])
    }
    return JsonResponse(
        {
            "returns": [returns.return_json(r, v2_orders.get(r.order_id)) for r in page],
            "next_cursor": cursor_encode(page[-1].id) if more else None,
        }
    )


def _own_return(user: ApiUser, return_id: str) -> Return:
    row = (
        Return.objects.select_related("order")
        .filter(order__seller_id=user.seller_id, id=_id(return_id))
        .first()
    )
    if row is None:
        raise PackageError(404, f"return {return_id!r} not found")
    return row


@v2_view(("GET",))
def return_detail(
    request: HttpRequest, user: ApiUser, params: dict, return_id: str
) -> JsonResponse:
    return JsonResponse(returns.return_json(_own_return(user, return_id)))


@v2_view(("POST",))
def return_refund(
    request: HttpRequest, user: ApiUser, params: dict, return_id: str
) -> JsonResponse:
    row = return_refunds.return_refund(_own_return(user, return_id), json_body(request))
    return JsonResponse(returns.return_refund_json(row), status=201)


@v2_view(("POST",), parameters=frozenset({"op"}))
def return_operation(
    request: HttpRequest, user: ApiUser, params: dict[str, str], return_id: str
) -> JsonResponse:
    row = _own_return(user, return_id)
    op = params.get("op")
    if op not in returns.OPERATIONS:
        return query_refused({"op": f"required, one of {', '.join(returns.OPERATIONS)}"})
    body = _object_body(request, returns.OPERATION_KEYS[op])
    row = returns.run_operation(row, op, body)
    return JsonResponse(returns.return_json(row))
