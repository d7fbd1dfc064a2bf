"""The one decorator every API endpoint of the sandbox wears.

In this order: the method check; the room's auth hook (its caller: a v1 grant, a v2 API
user, an /api.php user, or none); then, inside the room's ``around`` (the /api.php rate
limit), the strict query string and the view. Every refusal is answered in the room's
``ErrorShape``: the view (or the hook) raises, the shape turns the exception into the
answer; an exception the shape does not know is a server error as usual.

The view is called as ``view(request, [caller,] [params,] *url_args)``: the caller when
there is an auth hook, the query parameters when ``pass_params``.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt as csrf_exempt_view

from sandbox.common.query_params import query_params

View = Callable[..., HttpResponse]


class Refusal(Exception):  # not an error: a finished answer
    """Raised with a finished answer (an auth hook that built its own 401, say)."""

    def __init__(self, response: HttpResponse) -> None:
        super().__init__(response.status_code)
        self.response = response


@dataclass(frozen=True)
class ErrorShape:
    """How a room answers what the decorator refuses."""

    method_not_allowed: Callable[[tuple[str, ...]], HttpResponse]
    query_refused: Callable[[dict[str, str]], HttpResponse]
    # The answer to an exception, or None to let it propagate (a 500).
    answer: Callable[[Exception], HttpResponse | None]

    def answer_or_raise(self, exc: Exception) -> HttpResponse:
        if isinstance(exc, Refusal):
            return exc.response
        response = self.answer(exc)
        if response is None:
            raise exc
        return response


Around = Callable[[HttpRequest, object, Callable[[], HttpResponse]], HttpResponse]


def endpoint(
    *,
    methods: tuple[str, ...],
    errors: ErrorShape,
    auth: Callable[[HttpRequest], object] | None = None,
    parameters: frozenset[str] | None = frozenset(),
    pass_params: bool = False,
    around: Around | None = None,
    csrf_exempt: bool = True,
) -> Callable[[View], View]:
    """``parameters``: the query parameters the endpoint takes (others, or one given twice,
    are refused); None leaves the query string to the view."""

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            if request.method not in methods:
                return errors.method_not_allowed(methods)
            caller: object = None
            if auth is not None:
                try:
                    caller = auth(request)
                except Exception as exc:
                    return errors.answer_or_raise(exc)

            def call() -> HttpResponse:
                try:
                    params: dict[str, str] = {}
                    if parameters is not None:
                        params, problems = query_params(request, parameters)
                        if problems:
                            return errors.query_refused(problems)
                    leading: tuple[object, ...] = (caller,) if auth is not None else ()
                    if pass_params:
                        leading += (params,)
                    return view(request, *leading, *args, **kwargs)
                except Exception as exc:
                    return errors.answer_or_raise(exc)

            return around(request, caller, call) if around is not None else call()

        return csrf_exempt_view(wrapper) if csrf_exempt else wrapper

    return decorate
