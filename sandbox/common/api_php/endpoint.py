"""/api.php on the common endpoint decorator: the group's rate limit around the view with
its headers on every answer, and the error shape (``{"status": "fail", "message"}``).

Who calls (the auth hook) is the group's to say: an API token's user for the Platform and
Authentication APIs (``records.api_users.callers``), none for the login. EDRTS answers in
the same shape (``ERRORS``) around its own limit."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from sandbox.common.api_php import rate_limits
from sandbox.common.api_php.errors import ApiError, fail, rate_limit_message
from sandbox.common.endpoint import Around, ErrorShape, endpoint
from sandbox.common.json_bodies import BadBody
from sandbox.common.query_params import problems_message

View = Callable[..., HttpResponse]
AuthHook = Callable[[HttpRequest], object]


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


def api_php_endpoint(
    *,
    group: str,
    methods: tuple[str, ...],
    auth: AuthHook | None,
    parameters: frozenset[str] | None = frozenset(),
    pass_params: bool = False,
) -> Callable[[View], View]:
    """The common endpoint for /api.php: with an ``auth`` hook the view gets its caller
    after the request (and the query parameters with ``pass_params``); the query string is
    strict (``parameters``: what the endpoint takes; None leaves it to the view)."""
    return endpoint(
        methods=methods,
        errors=ERRORS,
        auth=auth,
        parameters=parameters,
        pass_params=pass_params,
        around=_limited(group),
    )


def strings_response(data: object, status: int = 200) -> JsonResponse:
    """A JSON answer (lists allowed: the contract's list endpoints answer arrays)."""
    return JsonResponse(data, status=status, safe=False)
