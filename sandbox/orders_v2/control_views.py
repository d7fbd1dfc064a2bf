"""Control API of v2 under ``/sandbox/api/v2`` (JSON, no auth: a local simulator).

API users, per-seller settings (import schedule, PENDING option, workflow), an import
run on demand, the simulator's behaviour, and v2 orders for inspection; and playing the
seller by hand (``/sandbox/api/orders/<n>/ship|cancel|acknowledge``) and the auto-ship
switch, which go through the same v2 operations as the v2 API (``by_hand``).
"""

from django.http import HttpRequest, JsonResponse

from sandbox.common import switches
from sandbox.common.control import ControlError, control
from sandbox.common.json_bodies import BadBody, error_response, json_object_body
from sandbox.orders_v2 import after_sale_by_hand, by_hand, sim_settings
from sandbox.orders_v2.imports import seller_import, seller_settings
from sandbox.orders_v2.inspection import inspected_json
from sandbox.orders_v2.models import WORKFLOWS, ApiUser, SellerSettings, V2Order
from sandbox.orders_v2.packages import PackageError
from sandbox.orders_v2.tokens import active_tokens, api_user_upsert
from sandbox.records.orders.after_sale import inspected_refund_json, inspected_return_json
from sandbox.records.orders.models import Order, Refund, Return, Seller
from sandbox.records.orders.order_lookup import order_find


def _seller(username: str) -> Seller:
    seller = Seller.objects.filter(username=username).first()
    if seller is None:
        raise BadBody(f"unknown seller {username!r}")
    return seller


def api_user_json(user: ApiUser) -> dict:
    return {
        "username": user.username,
        "seller": user.seller.username,
        "client_id": user.client_id,
        "active_tokens": active_tokens(user),
        "created_at": user.created_at.isoformat(),
    }


@control(("GET", "POST"))
def api_users(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        rows = ApiUser.objects.select_related("seller").order_by("id")
        return JsonResponse({"api_users": [api_user_json(u) for u in rows]})
    body = json_object_body(request)
    for key in ("seller", "username", "password"):
        if not isinstance(body.get(key), str) or not body[key]:
            raise BadBody(f"{key} (non-empty string) is required")
    client_id = body.get("client_id")
    if client_id is not None and (not isinstance(client_id, str) or not client_id.isdigit()):
        raise BadBody("client_id must be a string of digits")
    user = api_user_upsert(
        seller=_seller(body["seller"]),
        username=body["username"],
        password=body["password"],
        client_id=client_id,
    )
    return JsonResponse(api_user_json(user))


def settings_json(settings: SellerSettings) -> dict:
    return {
        "seller": settings.seller.username,
        "workflow": settings.workflow,
        "import_interval_seconds": settings.import_interval_seconds,
        "import_pending": settings.import_pending,
        "last_import_at": settings.last_import_at.isoformat() if settings.last_import_at else None,
    }


def settings_change(settings: SellerSettings, body: dict) -> SellerSettings:
    if "workflow" in body:
        if body["workflow"] not in WORKFLOWS:
            raise BadBody(f"workflow must be one of {', '.join(WORKFLOWS)}")
        settings.workflow = body["workflow"]
    if "import_interval_seconds" in body:
        value = body["import_interval_seconds"]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0.1:
            raise BadBody("import_interval_seconds must be a number >= 0.1")
        settings.import_interval_seconds = float(value)
    if "import_pending" in body:
        if not isinstance(body["import_pending"], bool):
            raise BadBody("import_pending must be true or false")
        settings.import_pending = body["import_pending"]
    settings.save()
    return settings


@control(("GET", "POST"))
def seller_settings_view(request: HttpRequest, username: str) -> JsonResponse:
    settings = seller_settings(_seller(username))
    if request.method == "POST":
        settings = settings_change(settings, json_object_body(request))
    return JsonResponse(settings_json(settings))


@control(("POST",))
def seller_import_view(request: HttpRequest, username: str) -> JsonResponse:
    """Run the seller's scheduled import now (tests need not wait for the schedule)."""
    return JsonResponse({"imported": seller_import(_seller(username), everything=True)})


@control(("GET", "POST"))
def simulator_view(request: HttpRequest, username: str) -> JsonResponse:
    _seller(username)
    if request.method == "POST":
        try:
            return JsonResponse(sim_settings.settings_update(username, json_object_body(request)))
        except sim_settings.SimSettingsError as exc:
            raise BadBody(str(exc)) from exc
    if request.headers.get("X-Seller-Sim"):  # the simulator process itself (page: "seen")
        return JsonResponse(sim_settings.settings_read(username))
    return JsonResponse(sim_settings.settings_get(username))


@control(("GET",))
def orders_view(request: HttpRequest) -> JsonResponse:
    rows = V2Order.objects.select_related("order__client", "seller").order_by("-id")
    if request.GET.get("seller"):
        rows = rows.filter(seller__username=request.GET["seller"])
    if request.GET.get("mp_order_number"):
        rows = rows.filter(order__mp_order_number=request.GET["mp_order_number"])
    try:
        limit = max(1, min(int(request.GET.get("limit", 100)), 1000))
    except ValueError:
        return error_response("bad_request", "limit must be an integer", 400)
    return JsonResponse({"orders": [inspected_json(o) for o in rows[:limit]]})


@control(("POST", "GET"))
def auto_ship(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        seconds = json_object_body(request).get("seconds")
        if seconds is not None and (
            isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0
        ):
            raise BadBody("seconds must be a number >= 0 or null")
        switches.set_auto_ship(seconds=seconds)
    return JsonResponse({"seconds": switches.current.auto_ship_seconds})


def _order_for_control(request: HttpRequest, body: dict, mp_order_number: str) -> Order:
    return order_find(
        mp_order_number=mp_order_number,
        seller=body.get("seller") or request.GET.get("seller"),
        client_id=body.get("client_id") or request.GET.get("client_id"),
    )


@control(("POST",))
def order_ship(request: HttpRequest, mp_order_number: str) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    order = _order_for_control(request, body, mp_order_number)
    order = by_hand.order_ship(order=order, spec=body)
    return JsonResponse(by_hand.fulfillments_json(order))


@control(("POST",))
def order_cancel(request: HttpRequest, mp_order_number: str) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    order = _order_for_control(request, body, mp_order_number)
    order = by_hand.order_cancel(order=order, spec=body)
    return JsonResponse(by_hand.fulfillments_json(order))


@control(("POST",))
def order_acknowledge(request: HttpRequest, mp_order_number: str) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    order = _order_for_control(request, body, mp_order_number)
    by_hand.order_acknowledge(order=order)
    return JsonResponse({"acknowledged": True})


# -- returns and refunds by hand ---------------------------------------------------------------


@control(("POST",))
def return_operation(
    request: HttpRequest, mp_order_number: str, mp_return_number: str, op: str
) -> JsonResponse:
    """``POST /sandbox/api/orders/{n}/returns/{r}/authorize|reject|refund``: the v2
    operation with defaults (a new RMA, a stock reason, the requested amounts)."""
    body = json_object_body(request, allow_empty=True)
    order = _order_for_control(request, body, mp_order_number)
    row = after_sale_by_hand.return_of(order, mp_return_number)
    try:
        row = after_sale_by_hand.operation_by_hand(row, op, body, source="control API")
    except PackageError as exc:
        raise ControlError(
            "conflict" if exc.status == 409 else "bad_request", exc.message, exc.status
        ) from exc
    return JsonResponse(inspected_return_json(row))


@control(("POST",))
def order_refund(request: HttpRequest, mp_order_number: str) -> JsonResponse:
    """``POST /sandbox/api/orders/{n}/refunds``: a seller refund as v2 would post it."""
    body = json_object_body(request)
    order = _order_for_control(request, body, mp_order_number)
    try:
        row = after_sale_by_hand.seller_refund_by_hand(order, body, source="control API")
    except PackageError as exc:
        raise ControlError("bad_request", exc.message, exc.status, fields=exc.fields) from exc
    return JsonResponse(inspected_refund_json(row), status=201)


@control(("POST",))
def refund_resolve(request: HttpRequest, refund_id: str) -> JsonResponse:
    """``POST /sandbox/api/refunds/{id}/resolve`` ``{"fit": true}`` or ``{"refund_lines":
    […]}``: the seller resolves a PAUSED refund (back to CREATED, errors cleared)."""
    body = json_object_body(request)
    row = Refund.objects.select_related("order").filter(id=_refund_id(refund_id)).first()
    if row is None:
        raise ControlError("not_found", f"no refund {refund_id!r}", 404)
    try:
        row = after_sale_by_hand.refund_resolve_by_hand(row, body, source="control API")
    except PackageError as exc:
        raise ControlError(
            "conflict" if exc.status == 409 else "bad_request",
            exc.message,
            exc.status,
            fields=exc.fields,
        ) from exc
    return JsonResponse(inspected_refund_json(row))


def _refund_id(raw: str) -> int:
    return int(raw) if raw.isdigit() and len(raw) < 19 else -1


def _limit(request: HttpRequest) -> int:
    try:
        return max(1, min(int(request.GET.get("limit", 100)), 1000))
    except ValueError as exc:
        raise BadBody("limit must be an integer") from exc


@control(("GET",))
def returns_view(request: HttpRequest) -> JsonResponse:
    rows = Return.objects.select_related("order__seller", "order__client").order_by("-id")
    if request.GET.get("seller"):
        rows = rows.filter(order__seller__username=request.GET["seller"])
    if request.GET.get("status"):
        rows = rows.filter(status=request.GET["status"])
    return JsonResponse({"returns": [inspected_return_json(r) for r in rows[: _limit(request)]]})


@control(("GET",))
def refunds_view(request: HttpRequest) -> JsonResponse:
    rows = Refund.objects.select_related("order__seller", "order__client").order_by("-id")
    if request.GET.get("seller"):
        rows = rows.filter(order__seller__username=request.GET["seller"])
    if request.GET.get("status"):
        rows = rows.filter(status=request.GET["status"])
    return JsonResponse({"refunds": [inspected_refund_json(r) for r in rows[: _limit(request)]]})
