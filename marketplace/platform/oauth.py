"""The platform's OAuth token endpoint: the only code that sends token requests.

Facts from the contract (shared/spec/order-source-contract.md):

* authorize: ``GET {base}/authorize?response_type=code&client_id&redirect_url&state`` —
  the parameter is ``redirect_url`` (not ``redirect_uri``) and there is no ``scope``.
* token: ``POST {base}/access_token``, form-encoded, client credentials in the body
  (``client_secret_post``), answering ``{access_token, token_type, refresh_token,
  expires_in}``; 401 on bad credentials, code or refresh token.

Authlib builds and sends the requests; compliance hooks turn every non-2xx or odd
answer into a ``marketplace.platform.errors`` exception before Authlib parses it, and
every call is written to the platform call log (path and status only).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from authlib.integrations.requests_client import OAuth2Session
from django.conf import settings
from django.views.decorators.debug import sensitive_variables

from marketplace.platform.calllog import platform_call_record
from marketplace.platform.errors import (
    PlatformError,
    PlatformMalformedResponse,
    PlatformUnavailable,
    platform_error_for_response,
)

TOKEN_PATH = "/access_token"
AUTHORIZE_PATH = "/authorize"
AUTHORIZE_PARAMS = ("response_type", "client_id", "redirect_url", "state")


@dataclass(frozen=True)
class TokenSet:
    """What the token endpoint granted. No raw response is kept; tokens stay out of repr."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(repr=False)
    expires_in: int


# One keep-alive session per thread of each process. Authlib keeps the last token on
# the session object (``self.token``) and returns it from ``refresh_token``, so a
# session shared between threads could hand one caller another caller's token.
_local = threading.local()


def _session() -> OAuth2Session:
    key = (settings.PLATFORM_CLIENT_ID, settings.PLATFORM_CLIENT_SECRET)
    session = getattr(_local, "session", None)
    if session is None or getattr(_local, "key", None) != key:
        if session is not None:
            session.close()
        session = OAuth2Session(
            settings.PLATFORM_CLIENT_ID,
            settings.PLATFORM_CLIENT_SECRET,
            # The platform takes the client secret in the form body, not HTTP Basic.
            token_endpoint_auth_method="client_secret_post",
        )
        # As in client.py: read proxy settings once, not from the environment per request.
        session.trust_env = False
        session.proxies = requests.utils.get_environ_proxies(settings.PLATFORM_BASE_URL)
        session.verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get(
            "CURL_CA_BUNDLE", True
        )
        session.register_compliance_hook("access_token_response", _check_response)
        session.register_compliance_hook("refresh_token_response", _check_response)
        _local.session = session
        _local.key = key
    return session


def _timeout() -> tuple[float, float]:
    return (settings.PLATFORM_CONNECT_TIMEOUT, settings.PLATFORM_READ_TIMEOUT)


@sensitive_variables()
def _check_response(response: requests.Response) -> requests.Response:
    """Compliance hook: raise our error for anything but a usable 2xx JSON object."""
    if not 200 <= response.status_code < 300:
        raise platform_error_for_response(
            status=response.status_code, headers=response.headers, body=response.content
        )
    try:
        data = response.json()
    except ValueError:
        # A proxy's HTML page or a cut-off body: the platform may answer properly later.
        raise PlatformUnavailable(
            "token endpoint answered with a body that is not JSON", status=response.status_code
        ) from None
    if not isinstance(data, dict):
        raise PlatformUnavailable(
            "token endpoint answered with JSON that is not an object", status=response.status_code
        )
    if "error" in data:
        raise platform_error_for_response(
            status=response.status_code, headers=response.headers, body=response.content
        )
    return response


@sensitive_variables()
def _token_set(data: dict[str, Any], *, require_refresh_token: bool) -> TokenSet:
    access_token = data.get("access_token")
    refresh_token = data.get("refresh_token")
    expires_in = data.get("expires_in")
    token_type = data.get("token_type", "Bearer")
    missing = []
    if not isinstance(access_token, str) or not access_token:
        missing.append("access_token")
    if refresh_token is None:
        if require_refresh_token:
            missing.append("refresh_token")
    elif not isinstance(refresh_token, str) or not refresh_token:
        missing.append("refresh_token")
    try:
        expires_in = int(expires_in)
        if expires_in <= 0:
            raise ValueError
    except (TypeError, ValueError):
        missing.append("expires_in")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        missing.append("token_type")
    if missing:
        raise PlatformMalformedResponse(
            "token response lacks or garbles: " + ", ".join(missing), status=200
        )
    return TokenSet(access_token=access_token, refresh_token=refresh_token, expires_in=expires_in)


@sensitive_variables()
def _call(send: Any, *, seller_id: int | None, require_refresh_token: bool, what: str) -> TokenSet:
    started = time.monotonic()
    status: int | None = None
    error = ""
    try:
        # Exceptions are re-raised without the frames of Authlib, requests and urllib3
        # below us: those frames' locals hold the form body (client secret, code or
        # refresh token), and error pages and reports print frame locals.
        try:
            data = send()
        except PlatformError as exc:
            status = exc.status
            error = f"{what}: {type(exc).__name__}: {exc}"
            raise exc.with_traceback(None) from None
        except requests.Timeout:
            error = f"{what}: timeout"
            raise PlatformUnavailable("token endpoint timed out") from None
        except requests.RequestException as exc:
            error = f"{what}: {type(exc).__name__}"
            raise PlatformUnavailable(
                f"token endpoint unreachable ({type(exc).__name__})"
            ) from None
        except (ValueError, TypeError, KeyError):
            # Our hook accepted the HTTP answer, so Authlib choked on its fields
            # (e.g. a non-numeric expires_in).
            status = 200
            error = f"{what}: malformed token response"
            raise PlatformMalformedResponse(
                "token response has unusable fields", status=200
            ) from None
        status = 200
        try:
            return _token_set(dict(data), require_refresh_token=require_refresh_token)
        except PlatformMalformedResponse as exc:
            error = f"{what}: {exc}"
            raise
    finally:
        # Hold no grant on the long-lived session once the call is over.
        _session().token = None
        # Path and status only: the form body carries the client secret and the grant.
        platform_call_record(
            method="POST",
            path=_api_path(TOKEN_PATH),
            status=status,
            duration_ms=int((time.monotonic() - started) * 1000),
            seller_id=seller_id,
            error=error,
        )


def _api_path(path: str) -> str:
    return requests.utils.urlparse(settings.PLATFORM_BASE_URL).path.rstrip("/") + path


def authorization_url(*, state: str) -> str:
    """The platform's authorize URL for this marketplace: response_type, client_id,
    redirect_url and state, nothing else."""
    url, _ = _session().create_authorization_url(
        settings.PLATFORM_BASE_URL + AUTHORIZE_PATH,
        state=state,
        # The platform names this parameter redirect_url, not the standard redirect_uri.
        redirect_url=settings.PLATFORM_REDIRECT_URL,
    )
    # Authlib adds redirect_uri / scope when they are configured; the platform must get
    # exactly its four parameters, so an Authlib change cannot slip one in unnoticed.
    sent = sorted(parse_qs(urlsplit(url).query, keep_blank_values=True))
    if sent != sorted(AUTHORIZE_PARAMS):
        raise RuntimeError(f"authorize URL carries unexpected parameters: {sent}")
    return url


@sensitive_variables()
def token_exchange_code(*, code: str, seller_id: int | None = None) -> TokenSet:
    """Spend an authorization code. Raises ``marketplace.platform.errors.*``."""
    session = _session()

    @sensitive_variables()
    def send() -> dict[str, Any]:
        return session.fetch_token(
            settings.PLATFORM_BASE_URL + TOKEN_PATH,
            grant_type="authorization_code",
            code=code,
            timeout=_timeout(),
        )

    return _call(
        send,
        seller_id=seller_id,
        require_refresh_token=True,
        what="code exchange",
    )


@sensitive_variables()
def token_refresh(*, refresh_token: str, seller_id: int | None = None) -> TokenSet:
    """Spend a refresh token. ``TokenSet.refresh_token`` is None when the platform did not
    rotate it: keep the old one. Raises ``marketplace.platform.errors.*``."""
    session = _session()

    @sensitive_variables()
    def send() -> dict[str, Any]:
        token = session.refresh_token(
            settings.PLATFORM_BASE_URL + TOKEN_PATH,
            refresh_token=refresh_token,
            timeout=_timeout(),
        )
        data = dict(token)
        # Authlib copies the old refresh token into its answer when the platform sent
        # none; report "not rotated" instead so the caller keeps its stored one knowingly.
        if data.get("refresh_token") == refresh_token:
            data["refresh_token"] = None
        return data

    return _call(send, seller_id=seller_id, require_refresh_token=False, what="refresh")
