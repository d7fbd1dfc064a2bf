"""EDRTS on the common endpoint decorator: the auth hook (the API token in ``x-api-key``,
as the contract says), the ``edrts`` rate limit per API user around the view with its
headers on every authenticated answer, the reset-window watch, and the error shape
(``{"status": "fail", "message"}``, as the Platform API)."""

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from sandbox.common.api_php import rate_limits
from sandbox.common.api_php.endpoint import ERRORS
from sandbox.common.api_php.errors import ApiError, fail, rate_limit_message
from sandbox.common.endpoint import endpoint
from sandbox.edrts import state, waits
from sandbox.records.api_users.callers import INVALID_TOKEN, token_use
from sandbox.records.api_users.models import PlatformUser
from sandbox.records.api_users.tokens import token_find

GROUP = "edrts"
UNAVAILABLE = "Service unavailable (sandbox fault)"
View = Callable[..., HttpResponse]


def api_user(request: HttpRequest) -> PlatformUser:
    """The auth hook: the user of the active token in ``x-api-key`` (ApiError 401 if none)."""
    token = token_find(request.META.get("HTTP_X_API_KEY", "").strip())
    if token is None or token.revoked_at is not None:
        state.count(requests=1, refused=1)
        raise ApiError(INVALID_TOKEN, 401)
    return token_use(request, token)


def _limited(request: HttpRequest, user: object, call: Callable[[], HttpResponse]) -> HttpResponse:
    assert isinstance(user, PlatformUser)
    waits.check_arrival(user, request, arrived_at=time.time())
    decision = rate_limits.take(GROUP, f"user:{user.id}")
    response: HttpResponse
    if decision.allowed and state.take_unavailable():
        response = fail(UNAVAILABLE, 503)
        state.count(requests=1, unavailable=1)
    elif decision.allowed:
        response = call()
        state.count(
            requests=1,
            accepted=int(response.status_code < 300),
            refused=int(response.status_code >= 300),
        )
    else:
        response = fail(rate_limit_message(decision.wait_seconds), 429)
        state.count(requests=1, rate_limited=1)
    for name, value in decision.headers().items():
        response[name] = value
    waits.note_answer(user, request, response)
    return response


def edrts_endpoint(*, methods: tuple[str, ...]) -> Callable[[View], View]:
    """Authenticated EDRTS views get the ``PlatformUser`` after the request."""
    return endpoint(methods=methods, errors=ERRORS, auth=api_user, around=_limited)
