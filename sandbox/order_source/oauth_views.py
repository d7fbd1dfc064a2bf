"""The platform's OAuth endpoints: the seller's authorize page and the token endpoint.

The platform names the callback parameter ``redirect_url`` (not ``redirect_uri``) and has
no scopes. An unknown client or an unregistered redirect_url gets an error page, never a
redirect: the sandbox must not be an open redirector.
"""

import base64
import binascii
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from sandbox.common.secrets_hashing import password_matches, secret_matches
from sandbox.order_source import grants
from sandbox.order_source.token_body import TokenBodyError, token_fields
from sandbox.records.orders.models import Client, Seller

SESSION_SELLER_KEY = "sandbox_seller_id"


def _redirect_with(redirect_url: str, params: dict[str, str]) -> HttpResponseRedirect:
    separator = "&" if "?" in redirect_url else "?"
    return HttpResponseRedirect(redirect_url + separator + urlencode(params))


def _error_page(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "sandbox/authorize_error.html", {"message": message}, status=400)


@require_http_methods(["GET", "POST"])
def authorize(request: HttpRequest) -> HttpResponse:
    params = request.GET if request.method == "GET" else request.POST
    client_id = params.get("client_id", "")
    redirect_url = params.get("redirect_url", "")
    client = Client.objects.filter(client_id=client_id).first() if client_id else None
    if client is None:
        return _error_page(request, "Unknown client_id.")
    if not redirect_url:
        return _error_page(request, "redirect_url is required.")
    if redirect_url != client.redirect_url:
        return _error_page(request, "redirect_url is not registered for this client.")

    # From here on redirect_url is trusted: errors go back to the marketplace.
    state = params.get("state", "")
    response_type = params.get("response_type", "")
    if not state:
        return _redirect_with(
            redirect_url, {"error": "invalid_request", "error_description": "state is required"}
        )
    if response_type != "code":
        return _redirect_with(
            redirect_url,
            {
                "error": "unsupported_response_type" if response_type else "invalid_request",
                "error_description": "response_type must be code",
                "state": state,
            },
        )

    hidden = {
        "response_type": response_type,
        "client_id": client_id,
        "redirect_url": redirect_url,
        "state": state,
    }
    seller = _signed_in_seller(request)
    action = request.POST.get("action", "") if request.method == "POST" else ""

    if action == "signin":
        username = request.POST.get("username", "")
        candidate = Seller.objects.filter(username=username).first()
        if candidate is None or not password_matches(
            request.POST.get("password", ""), candidate.password_hash
        ):
            return render(
                request,
                "sandbox/signin.html",
                {"hidden": hidden, "client": client, "error": "Wrong username or password."},
                status=200,
            )
        request.session.cycle_key()
        request.session[SESSION_SELLER_KEY] = candidate.id
        seller = candidate
    elif action == "signout":
        request.session.flush()
        seller = None
    elif action in ("approve", "deny"):
        if seller is None:
            return render(request, "sandbox/signin.html", {"hidden": hidden, "client": client})
        if action == "deny":
            return _redirect_with(redirect_url, {"error": "access_denied", "state": state})
        code = grants.code_mint(client=client, seller=seller, redirect_url=redirect_url)
        return _redirect_with(redirect_url, {"code": code, "state": state})

    if seller is None:
        return render(request, "sandbox/signin.html", {"hidden": hidden, "client": client})
    return render(
        request, "sandbox/consent.html", {"hidden": hidden, "client": client, "seller": seller}
    )


def _signed_in_seller(request: HttpRequest) -> Seller | None:
    seller_id = request.session.get(SESSION_SELLER_KEY)
    if seller_id is None:
        return None
    return Seller.objects.filter(id=seller_id).first()


def _oauth_error(error: str, description: str, status: int) -> JsonResponse:
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    response["Cache-Control"] = "no-store"
    if error == "invalid_client":
        response["WWW-Authenticate"] = 'Basic realm="platform-sandbox"'
    return response


def _client_credentials(request: HttpRequest, fields: dict[str, str]) -> tuple[str, str] | None:
    """client_secret_post (the platform's way) or HTTP Basic; None when malformed."""
    form_id = fields.get("client_id")
    form_secret = fields.get("client_secret")
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header.lower().startswith("basic "):
        try:
            decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
        basic_id, sep, basic_secret = decoded.partition(":")
        if not sep or (form_id and form_id != basic_id) or form_secret:
            return None
        return basic_id, basic_secret
    if not form_id or form_secret is None:
        return None
    return form_id, form_secret


@csrf_exempt
@require_http_methods(["POST"])
def access_token(request: HttpRequest) -> JsonResponse:
    try:
        fields = token_fields(request)
    except TokenBodyError as exc:
        return _oauth_error("invalid_request", str(exc), 400)
    grant_type = fields.get("grant_type", "")
    grants.count(f"token_request:{grant_type or 'missing'}")
    credentials = _client_credentials(request, fields)
    if credentials is None:
        return _oauth_error("invalid_client", "client_id and client_secret are required", 401)
    client_id, client_secret = credentials
    client = Client.objects.filter(client_id=client_id).first()
    if client is None or not secret_matches(client_secret, client.secret_hash):
        return _oauth_error("invalid_client", "unknown client or wrong client_secret", 401)
    try:
        if grant_type == "authorization_code":
            code = fields.get("code", "")
            if not code:
                return _oauth_error("invalid_request", "code is required", 400)
            issued = grants.code_exchange(
                client=client,
                code=code,
                redirect_url=fields.get("redirect_url") or fields.get("redirect_uri"),
            )
        elif grant_type == "refresh_token":
            refresh_token = fields.get("refresh_token", "")
            if not refresh_token:
                return _oauth_error("invalid_request", "refresh_token is required", 400)
            issued = grants.refresh_exchange(
                client=client,
                refresh_token=refresh_token,
                request_id=getattr(request, "sandbox_request_id", ""),
            )
        elif not grant_type:
            return _oauth_error("invalid_request", "grant_type is required", 400)
        else:
            return _oauth_error("unsupported_grant_type", f"grant_type {grant_type!r}", 400)
    except grants.GrantError as exc:
        return _oauth_error(exc.error, exc.description, exc.status)
    grants.count(f"token_issued:{grant_type}")
    response = JsonResponse(issued.as_response())
    response["Cache-Control"] = "no-store"
    return response
