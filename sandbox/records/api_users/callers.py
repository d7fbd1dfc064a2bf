"""Who calls /api.php: the API token a request names, and its user (the auth hooks of the
Authentication and Platform APIs; EDRTS reads the token its own way, through ``token_use``).

The contract requires the same token in ``x-api-key`` and ``Authorization: Bearer`` on
every Platform call; a call that breaks that is refused 401 and counted as a violation."""

from django.http import HttpRequest

from sandbox.common import clock, violations
from sandbox.common.api_php.errors import ApiError
from sandbox.records.api_users.models import PlatformToken, PlatformUser
from sandbox.records.api_users.tokens import token_find

INVALID_TOKEN = "Invalid API token"


def _bearer(request: HttpRequest) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def _header_breach(request: HttpRequest, key: str, bearer: str | None) -> None:
    """Count a call that lacks one of the two headers, or sends two different tokens, as
    an ``api_token_headers`` violation (attributed when either header names a token)."""
    if not key and not bearer:
        detail = "neither x-api-key nor Authorization: Bearer"
    elif not key:
        detail = "Authorization: Bearer without x-api-key"
    elif not bearer:
        detail = "x-api-key without Authorization: Bearer"
    else:
        detail = "x-api-key and Authorization: Bearer name different tokens"
    known = token_find(key) if key else None
    if known is None and bearer:
        known = token_find(bearer)
    violations.violation_record(
        kind=violations.API_TOKEN_HEADERS,
        seller=known.user.username if known is not None else "",
        client_id=f"api-token:{known.name}" if known is not None else "",
        request_id=getattr(request, "sandbox_request_id", ""),
        detail=f"{request.method} {request.path}: {detail}",
    )


def _active(key: str) -> PlatformToken:
    token = token_find(key)
    if token is None or token.revoked_at is not None:
        raise ApiError(INVALID_TOKEN, 401)
    return token


def api_token(request: HttpRequest) -> PlatformToken:
    """The caller's active token, or ApiError 401 (the same answer for a missing header,
    two different tokens, an unknown or a revoked token: the contract requires both
    headers with the same token on every Platform call)."""
    key = request.META.get("HTTP_X_API_KEY", "").strip()
    bearer = _bearer(request) or ""
    if not key or not bearer or bearer != key:
        _header_breach(request, key, bearer)
        raise ApiError(INVALID_TOKEN, 401)
    return _active(key)


def api_key_token(request: HttpRequest) -> PlatformToken:
    """As ``api_token`` for the one call the interface document's table lists with
    ``x-api-key`` alone (``GET /user/accounts``): the Bearer header may be absent, but if
    sent it must name the same token."""
    key = request.META.get("HTTP_X_API_KEY", "").strip()
    bearer = _bearer(request)
    if not key or (bearer is not None and bearer != key):
        _header_breach(request, key, bearer)
        raise ApiError(INVALID_TOKEN, 401)
    return _active(key)


def token_use(request: HttpRequest, token: PlatformToken) -> PlatformUser:
    """Note the token's use, keep it on the request (the rate limit counts per token) and
    answer its user."""
    PlatformToken.objects.filter(id=token.id).update(last_used_at=clock.now())
    request.platform_token = token  # type: ignore[attr-defined]
    return token.user


def platform_user(request: HttpRequest) -> PlatformUser:
    """The auth hook: the user of the request's active API token (ApiError 401 if none)."""
    return token_use(request, api_token(request))


def platform_user_key_only(request: HttpRequest) -> PlatformUser:
    """The auth hook of ``GET /user/accounts``: ``x-api-key`` alone is enough."""
    return token_use(request, api_key_token(request))
