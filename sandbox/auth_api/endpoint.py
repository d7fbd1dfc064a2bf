"""/api.php on the common endpoint decorator: the auth hook (the API token in both
``x-api-key`` and ``Authorization: Bearer``, the same token), the group's rate limit
around the view with its headers on every answer, and the error shape
(``{"status": "fail", "message"}``)."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from sandbox.auth_api.models import PlatformToken, PlatformUser
from sandbox.auth_api.tokens import token_find
from sandbox.common import clock, violations
from sandbox.common.api_php import rate_limits
from sandbox.common.api_php.errors import ApiError, fail, rate_limit_message
from sandbox.common.endpoint import Around, ErrorShape, endpoint
from sandbox.common.json_bodies import BadBody
from sandbox.common.query_params import problems_message

View = Callable[..., HttpResponse]


def _bearer(request: HttpRequest) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


INVALID_TOKEN = "Invalid API token"


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


def api_token(request: HttpRequest) -> PlatformToken:
    """The caller's active token, or ApiError 401 (the same answer for a missing header,
    two different tokens, an unknown or a revoked token: the contract requires both
    headers with the same token on every Platform call)."""
    key = request.META.get("HTTP_X_API_KEY", "").strip()
    bearer = _bearer(request) or ""
    if not key or not bearer or bearer != key:
        _header_breach(request, key, bearer)
        raise ApiError(INVALID_TOKEN, 401)
    token = token_find(key)
    if token is None or token.revoked_at is not None:
        raise ApiError(INVALID_TOKEN, 401)
    return token


def api_key_token(request: HttpRequest) -> PlatformToken:
    """As ``api_token`` for the one call the interface document's table lists with
    ``x-api-key`` alone (``GET /user/accounts``): the Bearer header may be absent, but if
    sent it must name the same token."""
    key = request.META.get("HTTP_X_API_KEY", "").strip()
    bearer = _bearer(request)
    if not key or (bearer is not None and bearer != key):
        _header_breach(request, key, bearer)
        raise ApiError(INVALID_TOKEN, 401)
    token = token_find(key)
    if token is None or token.revoked_at is not None:
        raise ApiError(INVALID_TOKEN, 401)
    return token


def _limited(group: str) -> Around:
    """The group's rate limit around the query check and the view: per API token, or per
    address for the unauthenticated login. Its headers go on every answer it lets through
    or refuses."""

    def around(
        request: HttpRequest, user: object, call: Callable[[], HttpResponse]
    ) -> HttpResponse:
        token = getattr(request, "platform_token", None)
        subject = f"token:{token.id}" if token is not None else request.META.get("REMOTE_ADDR", "")
        decision = rate_limits.take(group, subject)
        if decision.allowed:
            response = call()
        else:
            response = fail(rate_limit_message(decision.wait_seconds), 429)
            response["Retry-After"] = str(decision.wait_seconds)
        for name, value in decision.headers().items():
            response[name] = value
        return response

    return around


def _user_of(request: HttpRequest, token: PlatformToken) -> PlatformUser:
    PlatformToken.objects.filter(id=token.id).update(last_used_at=clock.now())
    request.platform_token = token
    return token.user


def platform_user(request: HttpRequest) -> PlatformUser:
    """The auth hook: the user of the request's active API token (ApiError 401 if none)."""
    return _user_of(request, api_token(request))


def platform_user_key_only(request: HttpRequest) -> PlatformUser:
    """The auth hook of ``GET /user/accounts``: ``x-api-key`` alone is enough."""
    return _user_of(request, api_key_token(request))


def _answer(exc: Exception) -> HttpResponse | None:
    if isinstance(exc, ApiError):
        return fail(exc.message, exc.status)
    if isinstance(exc, BadBody):
        return fail(str(exc), 400)
    return None


ERRORS = ErrorShape(
    method_not_allowed=lambda methods: fail(f"Method not allowed: use {', '.join(methods)}", 405),
    query_refused=lambda problems: fail(problems_message(problems), 400),
    answer=_answer,
)


def platform_endpoint(
    *,
    group: str,
    methods: tuple[str, ...],
    authenticated: bool = True,
    parameters: frozenset[str] | None = frozenset(),
    pass_params: bool = False,
    key_only: bool = False,
) -> Callable[[View], View]:
    """The common endpoint for /api.php: authenticated views get the ``PlatformUser``
    after the request (and the query parameters with ``pass_params``); the query string is
    strict (``parameters``: what the endpoint takes; None leaves it to the view).
    ``key_only``: ``x-api-key`` alone authenticates (``GET /user/accounts`` only)."""
    hook = platform_user_key_only if key_only else platform_user
    return endpoint(
        methods=methods,
        errors=ERRORS,
        auth=hook if authenticated else None,
        parameters=parameters,
        pass_params=pass_params,
        around=_limited(group),
    )


def strings_response(data: object, status: int = 200) -> JsonResponse:
    """A JSON answer (lists allowed: the contract's list endpoints answer arrays)."""
    return JsonResponse(data, status=status, safe=False)
