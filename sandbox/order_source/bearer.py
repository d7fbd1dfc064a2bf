"""Bearer-token authentication of the order interface: one indexed lookup per request."""

from django.http import HttpRequest, JsonResponse

from sandbox.common import clock
from sandbox.common.endpoint import Refusal
from sandbox.common.secrets_hashing import token_hash
from sandbox.records.orders.models import Grant, Token

_CACHE_ATTRIBUTE = "_sandbox_bearer_token"


def bearer_token(request: HttpRequest) -> Token | None:
    """The access-token row the request presents (valid or not), looked up once per request:
    the early-retry watch needs the seller before the view runs, the view needs it again."""
    if hasattr(request, _CACHE_ATTRIBUTE):
        return getattr(request, _CACHE_ATTRIBUTE)
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, raw = header.partition(" ")
    token = None
    if scheme.lower() == "bearer" and raw.strip():
        token = (
            Token.objects.select_related("grant__client", "grant__seller")
            .filter(token_hash=token_hash(raw.strip()), kind=Token.ACCESS)
            .first()
        )
    setattr(request, _CACHE_ATTRIBUTE, token)
    return token


def bearer_grant(request: HttpRequest) -> Grant:
    """The live grant behind the request's access token; ``Refusal`` with the 401 if none
    (the auth hook of every Order Source endpoint but the token endpoint)."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, raw = header.partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        raise Refusal(_unauthorized("missing bearer token"))
    token = bearer_token(request)
    if token is None:
        raise Refusal(_unauthorized("unknown access token"))
    if token.grant.revoked_at is not None:
        raise Refusal(_unauthorized("the grant was revoked"))
    if token.expires_at <= clock.now():
        raise Refusal(_unauthorized("access token expired"))
    return token.grant


def _unauthorized(description: str) -> JsonResponse:
    response = JsonResponse(
        {"error": "invalid_token", "error_description": description, "message": description},
        status=401,
    )
    response["WWW-Authenticate"] = (
        f'Bearer error="invalid_token", error_description="{description}"'
    )
    return response
