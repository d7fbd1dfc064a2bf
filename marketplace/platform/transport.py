"""The HTTP machinery every platform API group shares.

* ``thread_session(base_url)``: one keep-alive ``requests.Session`` per thread and base,
  with proxy settings read once (``session_for``, the one session factory).
* ``Transport``: what every call goes through, whatever the group: the holder's embargo
  checked right before sending (and set by a 429, or a 503 that says when to come back),
  connect/read timeouts from settings, every attempt in the call log with secrets and
  buyer details scrubbed (a successful call keeps no request body), and non-2xx answers
  mapped to ``marketplace.platform.errors`` classes.
* ``ApiKeyTransport``: the Authentication and Platform API groups (the API token in
  ``x-api-key`` and in ``Authorization: Bearer``, both required by the interface
  document's export and import pages); the platform limits them per API user, so the
  user is the holder of the embargo and the request budget.
  ``order_source.OrderSourceClient`` is the order interface's (a seller's Bearer token;
  the seller is the holder), and
  ``oauth.TokenTransport`` the token endpoint's (Authlib sends through it; our OAuth
  client is the holder).
* An answer that is not JSON is described (status, size, type), never quoted, in
  exceptions and the call log: it may echo a secret in a shape no scrubber knows.

A 401 is raised as ``PlatformAuthError`` and never retried by ``ApiKeyTransport``: the API
token cannot be refreshed, only replaced by a person signing in again (the caller records
that). The order client refreshes the seller's grant once.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter

from marketplace.platform.calllog import (
    EXCERPT_CHARS,
    SUCCESS_EXCERPT_CHARS,
    platform_call_record,
)
from marketplace.platform.embargo import embargo_set, embargo_wait
from marketplace.platform.errors import (
    PlatformNoAnswer,
    PlatformRateLimited,
    PlatformUnavailable,
    answer_description,
    platform_error_for_response,
    retry_after_seconds,
)
from marketplace.platform.rate_budget import budget_acquire
from marketplace.platform.scrub import scrubbed_excerpt

logger = logging.getLogger(__name__)

_thread = threading.local()


def session_for(base_url: str) -> requests.Session:
    """A new keep-alive session for calls to ``base_url``: a small pool, no retries of its
    own, and the proxy and CA settings of the environment read once."""
    session = requests.Session()
    adapter = HTTPAdapter(pool_connections=4, pool_maxsize=8, max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    # requests re-reads the whole environment for proxy settings on every request
    # (~20 % of a push's CPU in the P1 profile). Read it once per session instead:
    # proxies for the platform's URL and the CA bundle, as trust_env would.
    session.trust_env = False
    session.proxies = requests.utils.get_environ_proxies(base_url)
    session.verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE", True)
    return session


def thread_session(base_url: str) -> requests.Session:
    """This thread's keep-alive session for ``base_url`` (created on first use)."""
    sessions: dict[str, requests.Session] | None = getattr(_thread, "sessions", None)
    if sessions is None:
        sessions = _thread.sessions = {}
    session = sessions.get(base_url)
    if session is None:
        session = sessions[base_url] = session_for(base_url)
    return session


class Transport:
    """One holder's calls to one API group (see the module docstring).

    ``holder`` keys the embargo (``embargo.py``); ``hold_wait`` is how long a call may
    sleep out the holder's embargo before it gives up with ``PlatformRateLimited``
    (a pull can wait a few seconds; a push batch cannot). ``seller_id`` labels the call
    log rows. Subclasses send with ``_send`` and read answers with ``_answer``.
    """

    def __init__(
        self, *, base_url: str, holder: str, hold_wait: float = 0.0, seller_id: int | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.holder = holder
        self.hold_wait = hold_wait
        self.seller_id = seller_id

    def read_timeout(self) -> float:
        """How long to wait for an answer once the request is sent."""
        return float(settings.PLATFORM_READ_TIMEOUT)

    def _send(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str],
        attempt: int,
        params: dict[str, str] | None = None,
        body: str | None = None,
        form: Mapping[str, str] | None = None,
        auth: requests.auth.AuthBase | None = None,
        order_number: str = "",
        log_bodies: bool = True,
        log_success_answer: bool = True,
    ) -> requests.Response:
        """One HTTP exchange, after the embargo check; recorded, and noted if it asks us
        to wait. Raises ``PlatformUnavailable`` when no answer came.

        ``body`` is JSON text; ``form`` a form to send url-encoded instead (the caller's
        headers say so), which ``auth`` may complete (OAuth client credentials).
        ``log_success_answer`` False: a 2xx answer's body is not logged, for callers that
        keep it themselves (the order push: its sync row holds the answer)."""
        self._embargo_honour(method, path)
        headers = {"Accept": "application/json", **headers}
        if body is not None:
            headers["Content-Type"] = "application/json"
        logged_path = path + (f"?{urlencode(params)}" if params else "")
        logged_body = body if log_bodies else None
        started = time.monotonic()
        try:
            response = thread_session(self.base_url).request(
                method,
                self.base_url + path,
                params=params,
                data=body.encode() if body is not None else form,
                headers=headers,
                auth=auth,
                timeout=(settings.PLATFORM_CONNECT_TIMEOUT, self.read_timeout()),
            )
        except requests.RequestException as exc:
            kind = "timeout" if isinstance(exc, requests.Timeout) else "connection error"
            self._record(
                method, logged_path, None, started, attempt, order_number, logged_body, None,
                error=f"{kind}: {type(exc).__name__}",
            )  # fmt: skip
            raise PlatformNoAnswer(f"platform {kind} on {method} {path}") from exc
        kept = log_bodies and (log_success_answer or not 200 <= response.status_code < 300)
        self._record(
            method, logged_path, response.status_code, started, attempt, order_number,
            logged_body, response.text if kept else None,
        )  # fmt: skip
        self._embargo_note(response)
        return response

    @staticmethod
    def _answer(response: requests.Response) -> Any:
        """The answer's JSON (``{}`` for an empty body); a non-2xx raises its error class."""
        if not 200 <= response.status_code < 300:
            raise platform_error_for_response(
                status=response.status_code, headers=response.headers, body=response.text
            )
        if not response.content.strip():
            return {}
        try:
            return response.json()
        except ValueError:
            # An unreadable answer is treated like an outage: the request may be retried.
            # It is described, never quoted: a PHP notice before the JSON of /login would
            # carry the API token into messages, pages and stored errors. No chained
            # exception either: the decode error keeps the whole body.
            raise PlatformUnavailable(
                answer_description(
                    status=response.status_code,
                    body=response.content,
                    content_type=response.headers.get("Content-Type") or "",
                ),
                status=response.status_code,
            ) from None

    def _embargo_honour(self, method: str, path: str) -> None:
        """Right before a call: wait out (or refuse to break) the holder's embargo."""
        remaining = embargo_wait(holder=self.holder, max_wait=self.hold_wait)
        if remaining > 0:
            raise PlatformRateLimited(
                f"not sent ({method} {path}): the platform asked us to wait {remaining:.1f} s more",
                code="held",
                retry_after=remaining,
            )

    def _embargo_note(self, response: requests.Response) -> None:
        """A 429, or a 503 that says when to come back, holds every call of the holder
        (all workers) until then. A 429 that does not say waits the default.

        A 503's ``X-Rate-Limit-Reset`` is not a "come back then": the rate-limit headers
        ride on every authenticated answer and name the end of the rate window, so only
        its ``Retry-After`` counts (else one failing call would hold every call of the API
        user until the window ends)."""
        if response.status_code not in (429, 503):
            return
        if response.status_code == 429:
            wait = retry_after_seconds(response.headers)
            if wait is None:
                wait = float(settings.PUSH_RATE_LIMIT_DEFAULT_WAIT)
        else:
            wait = retry_after_seconds({"Retry-After": response.headers.get("Retry-After", "")})
        if wait:
            embargo_set(holder=self.holder, seconds=wait)

    def _record(
        self,
        method: str,
        path: str,
        status: int | None,
        started: float,
        attempt: int,
        order_number: str,
        request_body: str | None,
        response_body: str | None,
        *,
        error: str = "",
    ) -> None:
        # A successful call logs no request body: what a push sent is on the order's sync
        # row, and scrubbing a 2 KB order for a 300-character excerpt cost ~5 % of a push.
        succeeded = status is not None and 200 <= status < 300
        # Only the excerpt's length is scrubbed and encoded (scrub.py).
        limit = SUCCESS_EXCERPT_CHARS if succeeded else EXCERPT_CHARS
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
                request_body=None if succeeded else scrubbed_excerpt(request_body, limit=limit),
                response_body=scrubbed_excerpt(response_body, limit=limit),
            )
        except Exception:  # the call log must never turn a good call into a failure
            logger.exception("could not record a platform call")


class ApiKeyTransport(Transport):
    """Calls of the API groups that authenticate with an API token: sent in both
    ``x-api-key`` and ``Authorization: Bearer`` on every call but the login (a platform
    refuses a call missing either with 401).

    ``api_user`` holds the embargo and the request budget (the platform limits these
    groups per user). A 429 is slept out once when the wait is within ``hold_wait``.
    ``log_bodies`` False keeps bodies out of the call log entirely (the login call
    carries a password and a code).
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str = "",
        api_user: str,
        hold_wait: float = 0.0,
        seller_id: int | None = None,
        group: str = "",
        rate_per_second: float | None = None,
    ) -> None:
        # ``group``: an API group the platform limits apart from the Platform API's (EDRTS,
        # group ``edrts``): its own embargo and request budget for the same user.
        super().__init__(
            base_url=base_url or settings.PLATFORM_API_BASE_URL,
            holder=f"api-user:{api_user}" + (f":{group}" if group else ""),
            hold_wait=hold_wait,
            seller_id=seller_id,
        )
        self._token = token
        self.api_user = api_user
        self.rate_per_second = rate_per_second
        self._turn_taken = False

    def _budget_key(self) -> str:
        return f"{self.holder}:api"

    def _budget_rate(self) -> float:
        return self.rate_per_second or settings.PLATFORM_API_RATE_PER_SECOND

    def turn_take(self) -> float:
        """Wait for the next request's turn in the budget now; that request then goes
        without waiting again. Returns the seconds waited. For a caller that composes its
        request from what is waiting: composed after the wait, it carries what arrived
        meanwhile (a batch filled while the budget is the limit)."""
        waited = budget_acquire(key=self._budget_key(), rate_per_second=self._budget_rate())
        self._turn_taken = True
        return waited

    def __repr__(self) -> str:  # the token stays out of reprs and tracebacks
        return f"<ApiKeyTransport {self.base_url} user={self.api_user!r}>"

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: dict[str, str] | None = None,
        authenticated: bool = True,
        log_bodies: bool = True,
    ) -> Any:
        """The answer's JSON (``{}`` for an empty body); raises a ``PlatformError``."""
        body = None if json_body is None else json.dumps(json_body, separators=(",", ":"))
        headers = (
            {"x-api-key": self._token, "Authorization": f"Bearer {self._token}"}
            if authenticated
            else {}
        )
        for attempt in (1, 2):
            if self._turn_taken:
                self._turn_taken = False  # taken ahead by turn_take: one request's turn
            else:
                budget_acquire(key=self._budget_key(), rate_per_second=self._budget_rate())
            response = self._send(
                method,
                path,
                headers=headers,
                attempt=attempt,
                params=params,
                body=body,
                log_bodies=log_bodies,
            )
            if response.status_code == 429 and attempt == 1:
                # The wait is now the user's embargo: _send sleeps it out if it is short,
                # then tries once more; a longer one raises PlatformRateLimited there.
                continue
            break
        return self._answer(response)
