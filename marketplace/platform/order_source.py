"""The Order Source interface (v1): the marketplace-facing order calls, on behalf of one
seller.

(Token calls live in ``oauth.py``.) The seller's Bearer token from a ``TokenSource``
(``tokens.py``; the sellers app implements it over its token vault), one
refresh-and-retry on 401, and the seller as the holder of the embargo; the session,
timeouts, call log (buyer details dropped), embargo and error mapping are the shared
``transport.Transport``'s. Returns and seller refunds of the same interface are
``returns_refunds.ReturnsRefundsCalls`` (mixed in here: one client per seller).

Never call it inside a database transaction: a slow platform would hold row locks.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

import requests
from django.conf import settings

from marketplace.platform.dates import to_wire
from marketplace.platform.embargo import seller_holder
from marketplace.platform.errors import PlatformMalformedResponse
from marketplace.platform.rate_budget import budget_acquire
from marketplace.platform.returns_refunds import ReturnsRefundsCalls, query_param
from marketplace.platform.tokens import TokenSource
from marketplace.platform.transport import Transport

logger = logging.getLogger(__name__)

# A client reuses the access token it read for this long instead of reading (and
# decrypting) it again for every call of a batch. Far below TOKEN_REFRESH_LEEWAY, so a
# cached token never gets near its expiry; a 401 drops it at once.
TOKEN_REUSE_SECONDS = 30.0


def _param(value: Any) -> str:
    """A listing filter: date-times as ``to_wire`` writes them (the listing reads a time
    without a zone in America/New_York, and a strict platform refuses any other form)."""
    return to_wire(value) if isinstance(value, datetime) else query_param(value)


class OrderSourceClient(ReturnsRefundsCalls, Transport):
    """Order calls on behalf of one seller, with the tokens of that seller's grant."""

    def __init__(
        self,
        *,
        seller_id: int,
        tokens: TokenSource,
        base_url: str | None = None,
        hold_wait: float = 0.0,
    ) -> None:
        super().__init__(
            base_url=base_url or settings.PLATFORM_BASE_URL,
            holder=seller_holder(seller_id),
            hold_wait=hold_wait,
            seller_id=seller_id,
        )
        self.tokens = tokens
        self._token: str | None = None
        self._token_read_at = 0.0

    # --- the order interface --------------------------------------------------------

    def put_order(self, mp_order_number: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        data = self._request(
            "PUT",
            f"/orders/{quote(mp_order_number, safe='')}",
            json_body=payload,
            order_number=mp_order_number,
            log_success_answer=False,  # the push keeps it on the order's sync row
        )
        return data if isinstance(data, dict) else {}

    def get_order(self, mp_order_number: str) -> dict[str, Any]:
        return self._expect_dict(
            self._request(
                "GET", f"/orders/{quote(mp_order_number, safe='')}", order_number=mp_order_number
            )
        )

    def list_orders(self, **filters: Any) -> dict[str, Any]:
        """One page of ``GET /orders``. Listings share the seller's request budget."""
        params = {k: _param(v) for k, v in filters.items() if v is not None}
        page = self._expect_dict(self._request("GET", "/orders", params=params, budget=True))
        if not isinstance(page.get("orders"), list):
            raise PlatformMalformedResponse("order listing without an orders list", status=200)
        return page

    def iter_order_pages(self, **filters: Any) -> Iterator[dict[str, Any]]:
        """Every page of ``GET /orders`` with ``filters``, following ``next_cursor``."""
        filters.pop("cursor", None)
        cursor: str | None = None
        while True:
            page = self.list_orders(**filters, cursor=cursor)
            yield page
            cursor = page.get("next_cursor") or None
            if not cursor:
                return

    def get_fulfillments(self, mp_order_number: str) -> dict[str, Any]:
        return self._expect_dict(
            self._request(
                "GET",
                f"/orders/{quote(mp_order_number, safe='')}/fulfillments",
                order_number=mp_order_number,
            )
        )

    def post_errors(self, mp_order_number: str, errors: list[dict[str, Any]]) -> None:
        self._request(
            "POST",
            f"/orders/{quote(mp_order_number, safe='')}/errors",
            json_body=errors,
            order_number=mp_order_number,
        )

    # --- transport ---------------------------------------------------------------------

    def access_token(self) -> str:
        """The seller's current access token (read from the token source, reused briefly)."""
        return self._access_token()

    def _access_token(self, *, reread: bool = False) -> str:
        now = time.monotonic()
        if reread or self._token is None or now - self._token_read_at > TOKEN_REUSE_SECONDS:
            self._token = self.tokens.access_token()
            self._token_read_at = now
        return self._token

    @staticmethod
    def _expect_dict(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise PlatformMalformedResponse("expected a JSON object", status=200)
        return data

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        json_body: Any = None,
        order_number: str = "",
        budget: bool = False,
        log_success_answer: bool = True,
    ) -> Any:
        body = None if json_body is None else json.dumps(json_body, separators=(",", ":"))
        token = self._access_token()
        response: requests.Response | None = None
        for attempt in (1, 2):
            if budget:
                budget_acquire(
                    key=f"seller:{self.seller_id}:order-listings",
                    rate_per_second=settings.PLATFORM_LIST_RATE_PER_SECOND,
                )
            response = self._send(
                method,
                path,
                headers={"Authorization": f"Bearer {token}"},
                attempt=attempt,
                params=params,
                body=body,
                order_number=order_number,
                log_success_answer=log_success_answer,
            )
            if response.status_code == 401 and attempt == 1:
                # The token may have been revoked or rotated under us: refresh once, retry
                # once. A grant that is gone raises the token source's error from here.
                self.tokens.refresh_after_unauthorized(rejected_token=token)
                token = self._access_token(reread=True)
                continue
            break
        assert response is not None
        return self._answer(response)
