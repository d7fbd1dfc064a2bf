"""The seller's HTTP client of the order API: the token, the v2 calls, waits and retries.

The token comes from ``GET /api/v1/get_token`` (HTTP Basic) and is kept until a call says
it is no longer valid (401), as the contract asks: at most 100 may be active at once.
A 429 or 503 is waited out (``Retry-After`` or ``X-Rate-Limit-Reset``, whichever is
later); other 5xx and connection errors are retried with a growing pause. Listings go
out at most twice a second.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import requests

log = logging.getLogger("seller_sim")
LISTING_INTERVAL = 0.5  # at most 2 listing requests a second (the contract's advice)
ATTEMPTS = 6
_EPOCH_THRESHOLD = 1_000_000_000


TEXT_SHOWN = 300  # of a body that is not a JSON error (an HTML error page, say)


def _error_words(body: Any, text: str) -> str:
    """The platform's whole message when its body has one (never cut mid-word), else the
    start of the raw text, marked as cut."""
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    text = " ".join(text.split())
    return text if len(text) <= TEXT_SHOWN else text[:TEXT_SHOWN].rsplit(" ", 1)[0] + " …"


class ApiError(Exception):
    def __init__(self, status: int, body: Any, text: str) -> None:
        super().__init__(f"{status}: {_error_words(body, text)}")
        self.status = status
        self.body = body


def _wait_seconds(response: requests.Response) -> float:
    waits = [1.0]
    retry_after = response.headers.get("Retry-After", "").strip()
    if retry_after.isdigit():
        waits.append(float(retry_after))
    reset = response.headers.get("X-Rate-Limit-Reset", "").strip()
    if reset.isdigit():
        value = int(reset)
        waits.append(value - time.time() if value > _EPOCH_THRESHOLD else float(value))
    return max(waits) + 0.05


class OrderApi:
    def __init__(self, base_url: str, username: str, password: str, client_id: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.auth = (username, password)
        self.client_id = client_id
        self.http = requests.Session()
        self.token: str | None = None
        self._last_listing = 0.0
        self._lock = threading.Lock()
        self.stop = threading.Event()

    def _sleep(self, seconds: float) -> None:
        self.stop.wait(max(0.0, seconds))

    def _send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        """One request, waited out and retried on 429/503/5xx/connection errors."""
        for attempt in range(ATTEMPTS):
            try:
                response = self.http.request(method, url, timeout=30, **kwargs)
            except requests.RequestException as exc:
                log.warning("%s %s failed (%s); retrying", method, url, exc)
                self._sleep(0.5 * 2**attempt)
                continue
            if response.status_code in (429, 503) and "too_many_tokens" not in response.text:
                self._sleep(_wait_seconds(response))
                continue
            if response.status_code >= 500:
                self._sleep(0.5 * 2**attempt)
                continue
            return response
        raise ApiError(0, None, f"{method} {url}: no answer after {ATTEMPTS} attempts")

    def token_get(self) -> str:
        response = self._send("GET", f"{self.base_url}/api/v1/get_token", auth=self.auth)
        if response.status_code != 200:
            raise ApiError(response.status_code, None, response.text)
        self.token = response.json()["token"]
        log.info("%s: got a new order-API token", self.auth[0])
        return self.token

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """A v2 call (``path`` under /api/v2); a new token once if the one held is refused."""
        if path in ("/orders", "/returns") and method == "GET":
            with self._lock:
                wait = self._last_listing + LISTING_INTERVAL - time.monotonic()
                if wait > 0:
                    self._sleep(wait)
                self._last_listing = time.monotonic()
        for _ in range(2):
            if self.token is None:
                self.token_get()
            headers = {"token": self.token or "", "client": self.client_id}
            response = self._send(
                method, f"{self.base_url}/api/v2{path}", auth=self.auth, headers=headers, **kwargs
            )
            if response.status_code == 401:
                self.token = None  # expired (or revoked): get another, once
                continue
            break
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            raise ApiError(response.status_code, body, response.text)
        return body

    def orders(self, **params: str) -> list[dict[str, Any]]:
        """Every order matching the filters, following the cursor."""
        found: list[dict[str, Any]] = []
        params = {**params, "limit": "100"}
        while True:
            page = self.call("GET", "/orders", params=params)
            found.extend(page["orders"])
            if not page.get("next_cursor"):
                return found
            params = {**params, "cursor": page["next_cursor"]}

    def returns(self, **params: str) -> list[dict[str, Any]]:
        """Every return matching the filters, following the cursor."""
        found: list[dict[str, Any]] = []
        params = {**params, "limit": "100"}
        while True:
            page = self.call("GET", "/returns", params=params)
            found.extend(page["returns"])
            if not page.get("next_cursor"):
                return found
            params = {**params, "cursor": page["next_cursor"]}

    def control(self, method: str, path: str, **kwargs: Any) -> Any:
        """A call of the sandbox's control API (``path`` under /sandbox/api): where the
        seller's own tools act where the reference names no call (resolving a paused refund)."""
        response = self._send(method, f"{self.base_url}/sandbox/api{path}", **kwargs)
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            raise ApiError(response.status_code, body, response.text)
        return body

    def behaviour_overrides(self, seller: str) -> dict[str, Any]:
        """The sandbox control API's overrides for this seller ({} if none or unreachable)."""
        try:
            response = self.http.get(
                f"{self.base_url}/sandbox/api/v2/sellers/{seller}/simulator",
                headers={"X-Seller-Sim": "1"},  # the v2 seller page shows when we last asked
                timeout=10,
            )
        except requests.RequestException:
            return {}
        return response.json() if response.status_code == 200 else {}
