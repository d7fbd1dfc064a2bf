"""The decorator every /api.php view wears: method check, the API token (``x-api-key``,
and ``Authorization: Bearer`` equal to it when both are sent), the group's rate limit,
the error shape, and the rate-limit headers on every authenticated answer."""

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from sandbox.auth_api.models import PlatformToken, PlatformUser
from sandbox.auth_api.tokens import token_find
from sandbox.common import clock
from sandbox.common.api_php import rate_limits
from sandbox.common.api_php.errors import ApiError, fail, rate_limit_message
from sandbox.common.json_bodies import BadBody

View = Callable[..., HttpResponse]


def _bearer(request: HttpRequest) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def api_token(request: HttpRequest) -> PlatformToken:
    """The caller's active token, or ApiError 401."""
    key = request.META.get("HTTP_X_API_KEY", "").strip()
    bearer = _bearer(request)
    if not key:
        raise ApiError("Missing x-api-key header", 401)
    if bearer is not None and bearer != key:
        raise ApiError("x-api-key and the Authorization Bearer token differ", 401)
    token = token_find(key)
    if token is None or token.revoked_at is not None:
        raise ApiError("Invalid API token", 401)
    return token


def _limited(group: str, subject: str, call: Callable[[], HttpResponse]) -> HttpResponse:
    decision = rate_limits.take(group, subject)
    if decision.allowed:
        response = call()
    else:
        response = fail(rate_limit_message(decision.wait_seconds), 429)
        response["Retry-After"] = str(decision.wait_seconds)
    for name, value in decision.headers().items():
        response[name] = value
    return response


def _answer(call: Callable[[], HttpResponse]) -> HttpResponse:
    try:
        return call()
    except ApiError as exc:
        return fail(exc.message, exc.status)
    except BadBody as exc:
        return fail(str(exc), 400)


def platform_endpoint(
    *, group: str, methods: tuple[str, ...], authenticated: bool = True
) -> Callable[[View], View]:
    """Authenticated views receive the ``PlatformUser`` after the request."""

    def decorate(view: View) -> View:
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            if request.method not in methods:
                return fail(f"Method not allowed: use {', '.join(methods)}", 405)
            if not authenticated:
                subject = request.META.get("REMOTE_ADDR", "")
                return _limited(group, subject, lambda: _answer(lambda: view(request)))
            try:
                token = api_token(request)
            except ApiError as exc:
                return fail(exc.message, exc.status)
            PlatformToken.objects.filter(id=token.id).update(last_used_at=clock.now())
            user: PlatformUser = token.user
            request.platform_token = token
            return _limited(
                group,
                f"token:{token.id}",
                lambda: _answer(lambda: view(request, user, *args, **kwargs)),
            )

        return wrapper

    return decorate


def strings_response(data: object, status: int = 200) -> JsonResponse:
    """A JSON answer (lists allowed: the contract's list endpoints answer arrays)."""
    return JsonResponse(data, status=status, safe=False)
