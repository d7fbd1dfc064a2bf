"""The seller-side order API: ``GET /api/v1/get_token`` and ``/api/v2/orders…``.

Every v2 call needs HTTP Basic (the order-API user) plus the headers ``token`` and
``client``; it sees the orders of that user's seller account only (another seller's
order is 404). Query strings and bodies are read strictly: unknown or repeated query
parameters and unknown body fields are 400s naming them.
"""

from collections.abc import Callable
from dataclasses import replace

from django.http import HttpRequest, JsonResponse

from sandbox.common.endpoint import ErrorShape, View, endpoint
from sandbox.common.errors import method_not_allowed, query_refused, validation_error
from sandbox.common.json_bodies import BadBody, error_response, json_body
from sandbox.orders_v2 import fulfillment_kinds, packages, serialize
from sandbox.orders_v2.listing import PARAMETERS, cursor_encode, listing_filters
from sandbox.orders_v2.models import ApiUser, Cancellation, Package, V2Order
from sandbox.orders_v2.tokens import AuthProblem, token_issue, v2_user

FULFILLMENT_KEYS = frozenset(
    {"fulfillment_type", "fulfillment_lines", "shipment", "local_delivery", "pickup"}
)
SHIPMENT_KEYS = frozenset({"shipped_date", "carrier", "tracking_number"})
CANCELLATION_KEYS = frozenset({"cancellation_lines", "reason"})


def _auth_error(problem: AuthProblem) -> JsonResponse:
    response = error_response(problem.error, str(problem), problem.status)
    if problem.status == 401:
        response["WWW-Authenticate"] = 'Basic realm="order API"'
    return response


def _answer(exc: Exception) -> JsonResponse | None:
    if isinstance(exc, AuthProblem):
        return _auth_error(exc)
    if isinstance(exc, BadBody):
        return validation_error(str(exc), {"": str(exc)})
    if isinstance(exc, packages.PackageError):
        if exc.status == 400:
            return validation_error(exc.message, exc.fields)
        return error_response(
            "not_found" if exc.status == 404 else "conflict", exc.message, exc.status
        )
    return None


ERRORS = ErrorShape(
    method_not_allowed=method_not_allowed, query_refused=query_refused, answer=_answer
)
# The token call's 405 names the method but (as before) sends no Allow header.
TOKEN_ERRORS = replace(
    ERRORS,
    method_not_allowed=lambda methods: error_response(
        "method_not_allowed", f"use {', '.join(methods)}", 405
    ),
)


@endpoint(methods=("GET",), errors=TOKEN_ERRORS)
def get_token(request: HttpRequest) -> JsonResponse:
    # Authenticates with the user's Basic credentials itself: it issues what v2_user checks.
    return JsonResponse({"token": token_issue(request)})


def v2_view(
    methods: tuple[str, ...], *, parameters: frozenset[str] = frozenset()
) -> Callable[[View], View]:
    """The common endpoint with the v2 API user as the caller: views get
    ``(request, user, params, *url_args)``."""
    return endpoint(
        methods=methods, errors=ERRORS, auth=v2_user, parameters=parameters, pass_params=True
    )


def _own_order(user: ApiUser, order_id: str) -> V2Order:
    order = (
        V2Order.objects.select_related("order__client", "seller")
        .filter(seller_id=user.seller_id, id=int(order_id) if order_id.isdigit() else -1)
        .first()
    )
    if order is None:
        raise packages.PackageError(404, f"order {order_id!r} not found")
    return order


def _object_body(
    request: HttpRequest, allowed: frozenset[str], *, allow_empty: bool = False
) -> dict:
    if allow_empty and not request.body:
        return {}
    body = json_body(request)
    if not isinstance(body, dict):
        raise BadBody("the body must be a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise packages.PackageError(
            400, f"unknown fields: {', '.join(unknown)}", {key: "unknown field" for key in unknown}
        )
    return body


@v2_view(("GET",), parameters=PARAMETERS)
def orders_list(request: HttpRequest, user: ApiUser, params: dict[str, str]) -> JsonResponse:
    query, limit, problems = listing_filters(params)
    if problems:
        return query_refused(problems)
    rows = list(
        V2Order.objects.select_related("order__client")
        .filter(query, seller_id=user.seller_id)
        .order_by("id")[: limit + 1]
    )
    page, more = rows[:limit], len(rows) > limit
    return JsonResponse(
        {
            "orders": [serialize.order_json(order) for order in page],
            "next_cursor": cursor_encode(page[-1].id) if more else None,
        }
    )


@v2_view(("GET",))
def order_detail(request: HttpRequest, user: ApiUser, params: dict, order_id: str) -> JsonResponse:
    return JsonResponse(serialize.order_json(_own_order(user, order_id)))


@v2_view(("POST",))
def order_confirm(request: HttpRequest, user: ApiUser, params: dict, order_id: str) -> JsonResponse:
    return _confirm(request, _own_order(user, order_id))


def _confirm(request: HttpRequest, order: V2Order) -> JsonResponse:
    body = _object_body(request, frozenset({"merchant_order_number"}), allow_empty=True)
    number = body.get("merchant_order_number")
    if number is not None and (not isinstance(number, str) or not number or len(number) > 128):
        raise packages.PackageError(
            400,
            "merchant_order_number must be a string of 1-128 characters",
            {"merchant_order_number": "a string of 1-128 characters"},
        )
    order = packages.order_confirm(order, number)
    return JsonResponse(
        {"id": str(order.id), "merchant_order_number": order.merchant_order_number or None}
    )


# ``POST /orders/{id}/run-operation?op=…`` (reference: run-order-op). Which operations
# exist is not published: our choice is the one order operation v2 has, ``confirm``,
# with the same body and answer as ``POST /orders/{id}/confirm``.
ORDER_OPERATIONS = ("confirm",)


@v2_view(("POST",), parameters=frozenset({"op"}))
def order_operation(
    request: HttpRequest, user: ApiUser, params: dict[str, str], order_id: str
) -> JsonResponse:
    if params.get("op") not in ORDER_OPERATIONS:
        return query_refused({"op": f"required, one of {', '.join(ORDER_OPERATIONS)}"})
    return _confirm(request, _own_order(user, order_id))


def _fulfillment_body(request: HttpRequest, order: V2Order) -> tuple[list[dict], dict]:
    body = _object_body(request, FULFILLMENT_KEYS)
    shipment = body.get("shipment")
    if isinstance(shipment, dict):
        unknown = sorted(set(shipment) - SHIPMENT_KEYS)
        if unknown:
            raise packages.PackageError(
                400,
                f"unknown shipment fields: {', '.join(unknown)}",
                {f"shipment.{key}": "unknown field" for key in unknown},
            )
    lines = packages.lines_parse(order, body.get("fulfillment_lines"), "fulfillment_lines")
    return lines, fulfillment_kinds.fulfillment_parse(body)


def _cancellation_body(request: HttpRequest, order: V2Order) -> tuple[list[dict], str]:
    body = _object_body(request, CANCELLATION_KEYS)
    reason = packages.reason_check(body.get("reason"))
    return packages.lines_parse(order, body.get("cancellation_lines"), "cancellation_lines"), reason


@v2_view(("GET", "POST"))
def fulfillments(request: HttpRequest, user: ApiUser, params: dict, order_id: str) -> JsonResponse:
    order = _own_order(user, order_id)
    if request.method == "GET":
        rows = Package.objects.filter(order=order).order_by("id")
        return JsonResponse({"fulfillments": [serialize.package_json(p) for p in rows]})
    lines, shipment = _fulfillment_body(request, order)
    package = packages.package_create(order, lines, shipment)
    return JsonResponse(serialize.package_json(package), status=201)


@v2_view(("GET", "PUT", "DELETE"))
def fulfillment(
    request: HttpRequest, user: ApiUser, params: dict, order_id: str, fulfillment_id: str
) -> JsonResponse:
    order = _own_order(user, order_id)
    package = Package.objects.filter(
        order=order, id=int(fulfillment_id) if fulfillment_id.isdigit() else -1
    ).first()
    if package is None:
        raise packages.PackageError(404, f"fulfillment {fulfillment_id!r} not found")
    if request.method == "GET":
        return JsonResponse(serialize.package_json(package))
    if request.method == "DELETE":
        packages.package_delete(package)
        return JsonResponse({})
    lines, shipment = _fulfillment_body(request, order)
    return JsonResponse(serialize.package_json(packages.package_update(package, lines, shipment)))


@v2_view(("GET", "POST"))
def cancellations(request: HttpRequest, user: ApiUser, params: dict, order_id: str) -> JsonResponse:
    order = _own_order(user, order_id)
    if request.method == "GET":
        rows = Cancellation.objects.filter(order=order).order_by("id")
        return JsonResponse({"cancellations": [serialize.cancellation_json(c) for c in rows]})
    lines, reason = _cancellation_body(request, order)
    cancellation = packages.cancellation_create(order, lines, reason)
    return JsonResponse(serialize.cancellation_json(cancellation), status=201)


@v2_view(("GET", "PUT", "DELETE"))
def cancellation(
    request: HttpRequest, user: ApiUser, params: dict, order_id: str, cancellation_id: str
) -> JsonResponse:
    order = _own_order(user, order_id)
    found = Cancellation.objects.filter(
        order=order, id=int(cancellation_id) if cancellation_id.isdigit() else -1
    ).first()
    if found is None:
        raise packages.PackageError(404, f"cancellation {cancellation_id!r} not found")
    if request.method == "GET":
        return JsonResponse(serialize.cancellation_json(found))
    if request.method == "DELETE":
        packages.cancellation_delete(found)
        return JsonResponse({})
    lines, reason = _cancellation_body(request, order)
    return JsonResponse(
        serialize.cancellation_json(packages.cancellation_update(found, lines, reason))
    )
