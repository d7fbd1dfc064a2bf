"""The platform client: the only code that speaks HTTP to the platform for order calls.

(Token calls live in ``oauth.py``.) One keep-alive ``requests.Session`` per thread, connect
and read timeouts from settings, the seller's Bearer token from the token vault, one
refresh-and-retry on 401, statuses mapped to ``marketplace.platform.errors`` classes, and
every attempt recorded in the call log (``PlatformCall``) with redacted excerpts from
which buyer details are dropped.

Never call it inside a database transaction: a slow platform would hold row locks.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter

from marketplace.platform.calllog import platform_call_record
from marketplace.platform.errors import (
    PlatformMalformedResponse,
    PlatformUnavailable,
    platform_error_for_response,
)
from marketplace.platform.rate_budget import budget_acquire

logger = logging.getLogger(__name__)

_thread = threading.local()

# A client reuses the access token it read for this long instead of reading (and
# decrypting) it again for every call of a batch. Far below TOKEN_REFRESH_LEEWAY, so a
# cached token never gets near its expiry; a 401 drops it at once.
TOKEN_REUSE_SECONDS = 30.0

# Buyer details stay out of the call log (the order itself holds them).
_PRIVATE_KEYS = frozenset(
    {
        "customer",
        "shipping_address",
        "full_name",
        "email",
        "phone",
        "vat",
        "address1",
        "address2",
        "address3",
    }
)


def _session() -> requests.Session:
    session = getattr(_thread, "session", None)
    if session is None:
        session = requests.Session()
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=8, max_retries=0)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        # requests re-reads the whole environment for proxy settings on every request
        # (~20 % of a push's CPU in the P1 profile). Read it once per session instead:
        # proxies for the platform's URL and the CA bundle, as trust_env would.
        session.trust_env = False
        session.proxies = requests.utils.get_environ_proxies(settings.PLATFORM_BASE_URL)
        session.verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get(
            "CURL_CA_BUNDLE", True
        )
        _thread.session = session
    return session


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("[omitted]" if k in _PRIVATE_KEYS else _scrub(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _log_excerpt(text: str | None) -> str | None:
    """The body as the call log should see it: JSON without buyer details, else as is."""
    if not text:
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    return json.dumps(_scrub(data), separators=(",", ":"))


def _param(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | set):
        return ",".join(str(v) for v in value)
    return str(value)


class PlatformClient:
    """Order calls on behalf of one seller's connection."""

    def __init__(self, *, connection_id: int, seller_id: int, base_url: str | None = None) -> None:
        self.connection_id = connection_id
        self.seller_id = seller_id
        self.base_url = (base_url or settings.PLATFORM_BASE_URL).rstrip("/")
        self._token: str | None = None
        self._token_read_at = 0.0

    @classmethod
    def for_connection(cls, connection: Any) -> PlatformClient:
        return cls(connection_id=connection.pk, seller_id=connection.seller_id)

    @classmethod
    def for_seller(cls, seller: Any) -> PlatformClient:
        """Raises ``sellers.errors.ConnectionNotLive`` when the seller never connected."""
        from sellers.errors import ConnectionNotLive
        from sellers.models import PlatformConnection

        connection = PlatformConnection.objects.filter(seller_id=seller.pk).first()
        if connection is None:
            raise ConnectionNotLive(f"seller {seller.pk} has no platform connection")
        return cls.for_connection(connection)

    # --- the order interface --------------------------------------------------------

    def put_order(self, mp_order_number: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        data = self._request(
            "PUT",
            f"/orders/{quote(mp_order_number, safe='')}",
            json_body=payload,
            order_number=mp_order_number,
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
        """The seller's current access token (read through the vault, reused briefly)."""
        return self._access_token()

    def _access_token(self, *, reread: bool = False) -> str:
        from sellers.services import connection_access_token

        now = time.monotonic()
        if reread or self._token is None or now - self._token_read_at > TOKEN_REUSE_SECONDS:
            self._token = connection_access_token(connection_id=self.connection_id)
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
    ) -> Any:
        from sellers import vault
        from sellers.services import connection_refresh

        body = None if json_body is None else json.dumps(json_body, separators=(",", ":"))
        logged_path = path + (f"?{urlencode(params)}" if params else "")
        token = self._access_token()
        response: requests.Response | None = None
        for attempt in (1, 2):
            if budget:
                budget_acquire(
                    key=f"seller:{self.seller_id}:order-listings",
                    rate_per_second=settings.PLATFORM_LIST_RATE_PER_SECOND,
                )
            response = self._send(
                method, path, logged_path, params, body, token, order_number, attempt
            )
            if response.status_code == 401 and attempt == 1:
                # The token may have been revoked or rotated under us: refresh once, retry
                # once. A grant that is gone raises ReauthorizationRequired from here.
                connection_refresh(
                    connection_id=self.connection_id,
                    force=True,
                    stale_token_fingerprint=vault.token_fingerprint(token),
                )
                token = self._access_token(reread=True)
                continue
            break
        assert response is not None
        if not 200 <= response.status_code < 300:
            raise platform_error_for_response(
                status=response.status_code, headers=response.headers, body=response.text
            )
        if not response.content.strip():
            return {}
        try:
            return response.json()
        except ValueError as exc:
            # An unreadable answer is treated like an outage: the request may be retried.
            raise PlatformUnavailable(
                f"unreadable JSON from the platform: {response.text[:120]!r}",
                status=response.status_code,
            ) from exc

    def _send(
        self,
        method: str,
        path: str,
        logged_path: str,
        params: dict[str, str] | None,
        body: str | None,
        token: str,
        order_number: str,
        attempt: int,
    ) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        started = time.monotonic()
        try:
            response = _session().request(
                method,
                self.base_url + path,
                params=params,
                data=body.encode() if body is not None else None,
                headers=headers,
                timeout=(settings.PLATFORM_CONNECT_TIMEOUT, settings.PLATFORM_READ_TIMEOUT),
            )
        except requests.RequestException as exc:
            kind = "timeout" if isinstance(exc, requests.Timeout) else "connection error"
            self._record(
                method,
                logged_path,
                None,
                started,
                order_number,
                attempt,
                body,
                None,
                error=f"{kind}: {type(exc).__name__}",
            )
            raise PlatformUnavailable(f"platform {kind} on {method} {path}") from exc
        self._record(
            method,
            logged_path,
            response.status_code,
            started,
            order_number,
            attempt,
            body,
            response.text,
        )
        return response

    def _record(
        self,
        method: str,
        path: str,
        status: int | None,
        started: float,
        order_number: str,
        attempt: int,
        request_body: str | None,
        response_body: str | None,
        *,
        error: str = "",
    ) -> None:
        # A successful call logs no request body: what a push sent is on the order's sync
        # row, and scrubbing a 2 KB order for a 300-character excerpt cost ~5 % of a push.
        succeeded = status is not None and 200 <= status < 300
        try:
            platform_call_record(
                method=method,
                path=path,
                status=status,
                duration_ms=int((time.monotonic() - started) * 1000),
                seller_id=self.seller_id,
                order_number=order_number,
                attempt=attempt,
                error=error,
                request_body=None if succeeded else _log_excerpt(request_body),
                response_body=_log_excerpt(response_body),
            )
        except Exception:  # the call log must never turn a good call into a failure
            logger.exception("could not record a platform call")
