"""Early retries on the Order Source API, per (client, seller) of the bearer grant: the
``WaitBook`` of ``sandbox.common.retry_watch`` kept for every seller-scoped ``/api/v1``
endpoint (all but the token endpoint and the authorize page)."""

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from sandbox.common.request_log import endpoint_key
from sandbox.common.retry_watch import WaitBook
from sandbox.order_source.bearer import bearer_token

UNSCOPED_ENDPOINTS = {"access_token", "authorize"}

SellerKey = tuple[int, int]

_sellers = WaitBook()


def reset() -> None:
    _sellers.reset()


class RetryWatchMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.sandbox_arrived_at = time.time()  # type: ignore[attr-defined]
        response = self.get_response(request)
        key: SellerKey | None = getattr(request, "sandbox_seller_key", None)
        if key is not None:
            _sellers.note_answer(key, request, response)
        return response

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: tuple, view_kwargs: dict
    ) -> HttpResponse | None:
        scoped = request.path.startswith("/api/v1/")
        if not scoped or endpoint_key(request) in UNSCOPED_ENDPOINTS:
            return None
        token = bearer_token(request)
        if token is None:
            return None  # no seller to hold to a wait
        grant = token.grant
        key = (grant.client_id, grant.seller_id)
        request.sandbox_seller_key = key  # type: ignore[attr-defined]
        _sellers.check_arrival(
            key,
            request,
            arrived_at=getattr(request, "sandbox_arrived_at", time.time()),
            seller=grant.seller.username,
            client_id=grant.client.client_id,
        )
        return None
