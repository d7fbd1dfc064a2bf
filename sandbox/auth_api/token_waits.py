"""Early retries on /api.php, per API token: the ``retry_watch`` rule for the order API,
keyed by the ``x-api-key`` token instead of the OAuth grant.

A 429 or 503 (our rate limit or a fault rule) that says how long to wait (``Retry-After``,
``X-Rate-Limit-Reset``) starts a wait for that token; a request with the same token that
arrives before it is over, later than the in-flight grace, is an ``early_retry``
violation (counted, never refused).
"""

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from sandbox.common.api_php.keys import PATH_PREFIX
from sandbox.common.retry_watch import WaitBook
from sandbox.records.api_users.tokens import token_find

_tokens = WaitBook()


def reset() -> None:
    _tokens.reset()


class TokenWaitsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(PATH_PREFIX) or request.path == PATH_PREFIX + "login":
            return self.get_response(request)
        arrived_at = time.time()
        token = token_find(request.META.get("HTTP_X_API_KEY", "").strip())
        if token is not None:
            _tokens.check_arrival(
                token.id,
                request,
                arrived_at=arrived_at,
                seller=token.user.username,
                client_id=f"api-token:{token.name}",
            )
        response = self.get_response(request)
        if token is not None:
            _tokens.note_answer(token.id, request, response)
        return response
