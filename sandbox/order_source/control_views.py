"""Control API of OAuth and the Order Source API under /sandbox/api: clients, sellers,
authorization codes, token shortcuts, revocation, refresh-token rotation."""

from urllib.parse import urlencode

from django.http import HttpRequest, JsonResponse

from sandbox.common import clock, switches
from sandbox.common.control import control, required_str
from sandbox.common.json_bodies import BadBody, error_response, json_object_body
from sandbox.order_source import grants
from sandbox.records.orders import accounts
from sandbox.records.orders.models import Client, Grant, Seller, Token
from sandbox.records.orders.order_lookup import OrderLookupError


@control(("POST", "GET"))
def clients(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        rows = Client.objects.values("client_id", "name", "redirect_url", "created_at")
        return JsonResponse({"clients": list(rows)})
    body = json_object_body(request)
    client = accounts.client_upsert(
        client_id=required_str(body, "client_id"),
        client_secret=required_str(body, "client_secret"),
        redirect_url=required_str(body, "redirect_url"),
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
        username=required_str(body, "username"),
        password=required_str(body, "password"),
        name=str(body.get("name") or ""),
    )
    return JsonResponse({"username": seller.username, "name": seller.name})


def _client_and_seller(body: dict) -> tuple[Client, Seller]:
    client = Client.objects.filter(client_id=required_str(body, "client_id")).first()
    if client is None:
        raise OrderLookupError("unknown_client", "unknown client_id", 404)
    seller = Seller.objects.filter(username=required_str(body, "seller")).first()
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


@control(("POST", "GET"))
def rotation(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        enabled = json_object_body(request).get("enabled")
        if not isinstance(enabled, bool):
            raise BadBody("enabled (bool) is required")
        switches.set_rotation(enabled=enabled)
    return JsonResponse({"enabled": switches.current.rotation_enabled})
