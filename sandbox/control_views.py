"""Control API of the simulator under /sandbox/api (JSON in and out, no auth: local only)."""

from collections.abc import Callable
from functools import wraps
from urllib.parse import urlencode

from django.db import connection, transaction
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from sandbox import (
    accounts,
    clock,
    faults,
    grants,
    request_log,
    retry_watch,
    simulated_seller,
    switches,
    violations,
)
from sandbox.api_php import reset as platform_reset
from sandbox.json_bodies import BadBody, error_response, json_object_body
from sandbox.models import (
    AuthorizationCode,
    Client,
    ErrorReport,
    Grant,
    Order,
    OrderStateChange,
    Seller,
    Token,
)
from sandbox.order_lookup import OrderLookupError, order_find
from sandbox.orders_v2 import reset as v2_reset
from sandbox.orders_v2 import sim_settings

View = Callable[..., JsonResponse]


def control(methods: tuple[str, ...]) -> Callable[[View], View]:
    """CSRF-exempt JSON view; bad bodies become 400s with one error shape."""

    def decorate(view: View) -> View:
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> JsonResponse:
            if request.method not in methods:
                return error_response("method_not_allowed", f"use {', '.join(methods)}", 405)
            try:
                return view(request, *args, **kwargs)
            except BadBody as exc:
                return error_response("bad_request", str(exc), 400)
            except OrderLookupError as exc:
                return error_response(exc.error, str(exc), exc.status, matches=exc.matches)
            except simulated_seller.SellerActionError as exc:
                return error_response(exc.error, str(exc), exc.status)

        return wrapper

    return decorate


def _required_str(body: dict, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise BadBody(f"{key} (non-empty string) is required")
    return value


def health(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@control(("POST",))
def reset(request: HttpRequest) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    keep_accounts = bool(body.get("keep_accounts", False))
    models = [
        *platform_reset.DATA_MODELS,
        *v2_reset.ORDER_MODELS,
        ErrorReport,
        OrderStateChange,
        Order,
        Token,
        AuthorizationCode,
        Grant,
    ]
    if not keep_accounts:
        models += [*platform_reset.ACCOUNT_MODELS, *v2_reset.ACCOUNT_MODELS, Seller, Client]
    with transaction.atomic(), connection.cursor() as cursor:
        # Raw deletes: the ORM's cascade collection is slow after a 5k-order benchmark.
        for model in models:
            cursor.execute(f"DELETE FROM {model._meta.db_table}")  # noqa: S608
    faults.reset()
    clock.reset()
    switches.reset()
    grants.counters_reset()
    request_log.reset()
    violations.reset()
    retry_watch.reset()
    sim_settings.reset()
    platform_reset.memory_reset()
    return JsonResponse({"reset": True, "kept_accounts": keep_accounts})


@control(("POST", "GET"))
def clients(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        rows = Client.objects.values("client_id", "name", "redirect_url", "created_at")
        return JsonResponse({"clients": list(rows)})
    body = json_object_body(request)
    client = accounts.client_upsert(
        client_id=_required_str(body, "client_id"),
        client_secret=_required_str(body, "client_secret"),
        redirect_url=_required_str(body, "redirect_url"),
        name=str(body.get("name") or ""),
    )
    return JsonResponse(
        {"client_id": client.client_id, "name": client.name, "redirect_url": client.redirect_url}
    )


@control(("POST", "GET"))
def sellers(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        return JsonResponse(
            {"sellers": list(Seller.objects.values("username", "name", "created_at"))}
        )
    body = json_object_body(request)
    seller = accounts.seller_upsert(
        username=_required_str(body, "username"),
        password=_required_str(body, "password"),
        name=str(body.get("name") or ""),
    )
    return JsonResponse({"username": seller.username, "name": seller.name})


def _client_and_seller(body: dict) -> tuple[Client, Seller]:
    client = Client.objects.filter(client_id=_required_str(body, "client_id")).first()
    if client is None:
        raise OrderLookupError("unknown_client", "unknown client_id", 404)
    seller = Seller.objects.filter(username=_required_str(body, "seller")).first()
    if seller is None:
        raise OrderLookupError("unknown_seller", "unknown seller", 404)
    return client, seller


@control(("POST",))
def codes(request: HttpRequest) -> JsonResponse:
    """Mint an authorization code exactly as the seller's Approve would (no browser)."""
    body = json_object_body(request)
    client, seller = _client_and_seller(body)
    redirect_url = body.get("redirect_url") or client.redirect_url
    if redirect_url != client.redirect_url:
        return error_response("bad_request", "redirect_url is not registered for this client", 400)
    code = grants.code_mint(client=client, seller=seller, redirect_url=redirect_url)
    state = str(body.get("state") or "")
    location = oauth_location(redirect_url, code, state)
    return JsonResponse({"code": code, "state": state, "redirect_to": location})


def oauth_location(redirect_url: str, code: str, state: str) -> str:
    params = {"code": code, "state": state} if state else {"code": code}
    return redirect_url + ("&" if "?" in redirect_url else "?") + urlencode(params)


@control(("POST",))
def tokens(request: HttpRequest) -> JsonResponse:
    """Shortcut: a new grant and its token pair, as if code and exchange had happened."""
    body = json_object_body(request)
    client, seller = _client_and_seller(body)
    issued = grants.grant_create(client=client, seller=seller)
    return JsonResponse({**issued.as_response(), "grant_id": issued.grant_id})


@control(("POST",))
def tokens_expire(request: HttpRequest) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    rows = Token.objects.filter(kind=Token.ACCESS, expires_at__gt=clock.now())
    if body.get("seller"):
        rows = rows.filter(grant__seller__username=body["seller"])
    if body.get("client_id"):
        rows = rows.filter(grant__client__client_id=body["client_id"])
    expired = rows.update(expires_at=clock.now())
    return JsonResponse({"expired": expired})


@control(("POST",))
def seller_revoke(request: HttpRequest, username: str) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    rows = Grant.objects.filter(seller__username=username, revoked_at__isnull=True)
    if body.get("client_id"):
        rows = rows.filter(client__client_id=body["client_id"])
    if body.get("grant_id"):
        rows = rows.filter(id=body["grant_id"])
    revoked = rows.update(revoked_at=clock.now(), revoked_reason="revoked_by_seller")
    return JsonResponse({"revoked": revoked})


@control(("POST", "GET", "DELETE"))
def faults_view(request: HttpRequest) -> JsonResponse:
    if request.method == "DELETE":
        faults.reset()
        return JsonResponse({"faults": []})
    if request.method == "POST":
        body = json_object_body(request)
        specs = body.get("faults", [body])
        if not isinstance(specs, list):
            raise BadBody("faults must be a list")
        try:
            for spec in specs:
                if not isinstance(spec, dict):
                    raise BadBody("each fault must be an object")
                faults.rule_add(spec)
        except faults.FaultSpecError as exc:
            raise BadBody(str(exc)) from exc
    return JsonResponse({"faults": faults.rules()})


@control(("POST", "GET"))
def clock_view(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        body = json_object_body(request)
        if body.get("reset"):
            clock.reset()
        shift = body.get("shift_seconds", 0)
        if isinstance(shift, bool) or not isinstance(shift, int | float):
            raise BadBody("shift_seconds must be a number")
        clock.shift(shift)
    return JsonResponse({"offset_seconds": clock.offset_seconds(), "now": clock.now().isoformat()})


@control(("POST", "GET"))
def rotation(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        enabled = json_object_body(request).get("enabled")
        if not isinstance(enabled, bool):
            raise BadBody("enabled (bool) is required")
        switches.set_rotation(enabled=enabled)
    return JsonResponse({"enabled": switches.current.rotation_enabled})


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


@control(("POST", "GET"))
def additive_fields(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        enabled = json_object_body(request).get("enabled")
        if not isinstance(enabled, bool):
            raise BadBody("enabled (bool) is required")
        switches.set_additive_fields(enabled=enabled)
    return JsonResponse({"enabled": switches.current.additive_fields})


@control(("POST", "GET"))
def retry_grace(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        seconds = json_object_body(request).get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise BadBody("seconds must be a number >= 0")
        switches.set_retry_grace(seconds=float(seconds))
    return JsonResponse({"seconds": switches.current.retry_grace_seconds})


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
    order = simulated_seller.order_ship(order=order, spec=body)
    return JsonResponse(simulated_seller.fulfillments_json(order))


@control(("POST",))
def order_cancel(request: HttpRequest, mp_order_number: str) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    order = _order_for_control(request, body, mp_order_number)
    order = simulated_seller.order_cancel(order=order, spec=body)
    return JsonResponse(simulated_seller.fulfillments_json(order))


@control(("POST",))
def order_acknowledge(request: HttpRequest, mp_order_number: str) -> JsonResponse:
    body = json_object_body(request, allow_empty=True)
    order = _order_for_control(request, body, mp_order_number)
    simulated_seller.order_acknowledge(order=order)
    return JsonResponse({"acknowledged": True})
