"""The platform's OAuth endpoints: the authorize URL and the token calls (code exchange,
refresh), the only code that sends token requests.

Facts from the contract (shared/spec/order-source-contract.md):

* authorize: ``GET {base}/authorize?response_type=code&client_id&redirect_url&state`` —
  the parameter is ``redirect_url`` (not ``redirect_uri``) and there is no ``scope``.
* token: ``POST {base}/access_token``, client credentials in the body
  (``client_secret_post``), answering ``{access_token, token_type, refresh_token,
  expires_in}``; 401 on bad credentials, code or refresh token. The references disagree on
  the body (form-encoded on the older page, JSON on the current one): the setting
  ``PLATFORM_TOKEN_BODY`` (``form`` by default, or ``json``) picks it; the fields are the
  same, so Authlib still builds them and a client auth method of ours re-encodes them.

``{base}`` is ``settings.PLATFORM_OAUTH_BASE_URL`` (by default the order interface's
base), so pointing the order calls at another version does not move the grant.

Authlib builds the requests (the form, ``client_secret_post``) and reads the token; it
sends them through ``TokenTransport``, a ``transport.Transport``: the one session per
thread, the embargo (the client's token calls are one holder), the call log (path and
status only: the form carries the client secret and the grant) and the error mapping.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client.oauth2_session import OAuth2Auth, OAuth2ClientAuth
from authlib.oauth2.client import OAuth2Client
from django.conf import settings
from django.views.decorators.debug import sensitive_variables

from marketplace.platform.errors import (
    PlatformError,
    PlatformMalformedResponse,
    PlatformNoAnswer,
    PlatformUnavailable,
    platform_error_for_response,
)
from marketplace.platform.transport import Transport

TOKEN_PATH = "/access_token"
# A refresh whose answer never came is asked again this long after (see token_refresh).
LOST_ANSWER_PAUSE_SECONDS = 1.0
AUTHORIZE_PATH = "/authorize"
AUTHORIZE_PARAMS = ("response_type", "client_id", "redirect_url", "state")


@dataclass(frozen=True)
class TokenSet:
    """What the token endpoint granted. No raw response is kept; tokens stay out of repr."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(repr=False)
    expires_in: int


def oauth_client_holder(client_id: str) -> str:
    """The holder of the embargo on our token calls: the marketplace's OAuth client."""
    return f"oauth-client:{client_id}"


class TokenTransport(Transport):
    """The session Authlib's client is given: its ``post`` goes through the transport.

    Its base is the OAuth base URL's origin, so the call log shows the token endpoint's
    whole path (``/api/v1/access_token``).
    """

    def __init__(self, *, seller_id: int | None = None) -> None:
        base = urlsplit(settings.PLATFORM_OAUTH_BASE_URL)
        super().__init__(
            base_url=f"{base.scheme}://{base.netloc}",
            holder=oauth_client_holder(settings.PLATFORM_CLIENT_ID),
            seller_id=seller_id,
        )

    def __repr__(self) -> str:
        return f"<TokenTransport {self.base_url}>"

    def read_timeout(self) -> float:
        """Longer than other calls' (``PLATFORM_TOKEN_READ_TIMEOUT``): a refresh whose
        answer we gave up on may still have rotated the refresh token at the platform, and
        the next refresh would then present a spent token, which costs the grant (reuse
        detection). Waiting for a slow answer is cheap; a lost grant needs the seller."""
        return float(settings.PLATFORM_TOKEN_READ_TIMEOUT)

    @sensitive_variables()
    def post(
        self,
        url: str,
        data: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        auth: requests.auth.AuthBase | None = None,
        **_: Any,
    ) -> requests.Response:
        """What Authlib calls to send a token request. Anything but a usable 2xx JSON
        object raises our error here, before Authlib parses the answer."""
        if not url.startswith(self.base_url + "/"):
            raise RuntimeError("token request outside the OAuth base URL")
        response = self._send(
            "POST",
            url[len(self.base_url) :],
            headers=dict(headers or {}),
            attempt=1,
            form=data,
            auth=auth,
            log_bodies=False,
        )
        data = self._answer(response)
        if not isinstance(data, dict):
            raise PlatformUnavailable(
                "token endpoint answered with JSON that is not an object",
                status=response.status_code,
            )
        if "error" in data:
            raise platform_error_for_response(
                status=response.status_code, headers=response.headers, body=response.content
            )
        return response


# Authlib ships no type information: its client is Any to mypy, so subclassing it is
# allowed here by name; the calls this module makes are declared below with their types.
class _AuthlibClient(OAuth2Client):  # type: ignore[misc]
    """Authlib's protocol client over ``TokenTransport`` instead of its own session."""

    client_auth_class = OAuth2ClientAuth
    token_auth_class = OAuth2Auth
    oauth_error_class = OAuthError

    if TYPE_CHECKING:  # Authlib's methods as they behave (its token is a dict)

        def create_authorization_url(
            self, url: str, state: str | None = None, **kwargs: Any
        ) -> tuple[str, str]: ...

        def fetch_token(self, url: str, **kwargs: Any) -> dict[str, Any]: ...

        def refresh_token(self, url: str, **kwargs: Any) -> dict[str, Any]: ...


JSON_AUTH_METHOD = "client_secret_post_json"


@sensitive_variables()
def _client_secret_post_json(
    client: Any, method: str, uri: str, headers: dict[str, str], body: str | None
) -> tuple[str, dict[str, str], str]:
    """``client_secret_post`` with the body sent as a JSON object instead of a form: the
    fields Authlib built (``grant_type``, ``code`` or ``refresh_token``), and the client's
    credentials. Authlib calls it as the request is prepared (requests then recomputes
    Content-Length)."""
    fields = dict(parse_qsl(body or "", keep_blank_values=True))
    fields.update(client_id=client.client_id, client_secret=client.client_secret or "")
    headers["Content-Type"] = "application/json"
    return uri, headers, json.dumps(fields)


def _client(transport: TokenTransport | None = None) -> _AuthlibClient:
    # A new client per call: Authlib keeps the last token on the client object, so a
    # shared one could hand one caller another caller's token. The HTTP session (keep-
    # alive) is the transport's, one per thread.
    as_json = settings.PLATFORM_TOKEN_BODY == "json"
    client = _AuthlibClient(
        transport or TokenTransport(),
        client_id=settings.PLATFORM_CLIENT_ID,
        client_secret=settings.PLATFORM_CLIENT_SECRET,
        # The platform takes the client secret in the body, not HTTP Basic.
        token_endpoint_auth_method=JSON_AUTH_METHOD if as_json else "client_secret_post",
    )
    client.register_client_auth_method((JSON_AUTH_METHOD, _client_secret_post_json))
    return client


@sensitive_variables()
def _token_set(data: dict[str, Any], *, require_refresh_token: bool) -> TokenSet:
    # "" for an absent value: refused below all the same, and keeps None out of the types.
    access_token = data.get("access_token", "")
    refresh_token = data.get("refresh_token")
    expires_in = data.get("expires_in", "")
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
def _call(send: Callable[[], Mapping[str, Any]], *, require_refresh_token: bool) -> TokenSet:
    # Exceptions are re-raised without the frames of Authlib, requests and urllib3 below
    # us: those frames' locals hold the form body (client secret, code or refresh token),
    # and error pages and reports print frame locals.
    try:
        data = send()
    except PlatformError as exc:
        if exc.status in (400, 415) and exc.code == "invalid_request":
            # Most likely the body's encoding (the references disagree): say which we sent.
            exc.message += f" (sent as {settings.PLATFORM_TOKEN_BODY}: see PLATFORM_TOKEN_BODY)"
        raise exc.with_traceback(None) from None
    except (ValueError, TypeError, KeyError):
        # The transport accepted the HTTP answer, so Authlib choked on its fields
        # (e.g. a non-numeric expires_in).
        raise PlatformMalformedResponse("token response has unusable fields", status=200) from None
    return _token_set(dict(data), require_refresh_token=require_refresh_token)


def authorization_url(*, state: str) -> str:
    """The platform's authorize URL for this marketplace: response_type, client_id,
    redirect_url and state, nothing else."""
    url, _ = _client().create_authorization_url(
        settings.PLATFORM_OAUTH_BASE_URL + AUTHORIZE_PATH,
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
    client = _client(TokenTransport(seller_id=seller_id))

    @sensitive_variables()
    def send() -> Mapping[str, Any]:
        return client.fetch_token(
            settings.PLATFORM_OAUTH_BASE_URL + TOKEN_PATH,
            grant_type="authorization_code",
            code=code,
        )

    return _call(send, require_refresh_token=True)


@sensitive_variables()
def token_refresh(*, refresh_token: str, seller_id: int | None = None) -> TokenSet:
    """Spend a refresh token. ``TokenSet.refresh_token`` is None when the platform did not
    rotate it: keep the old one. Raises ``marketplace.platform.errors.*``."""
    client = _client(TokenTransport(seller_id=seller_id))

    @sensitive_variables()
    def send() -> Mapping[str, Any]:
        token = client.refresh_token(
            settings.PLATFORM_OAUTH_BASE_URL + TOKEN_PATH, refresh_token=refresh_token
        )
        data = dict(token)
        # Authlib copies the old refresh token into its answer when the platform sent
        # none; report "not rotated" instead so the caller keeps its stored one knowingly.
        if data.get("refresh_token") == refresh_token:
            data["refresh_token"] = None
        return data

    try:
        return _call(send, require_refresh_token=False)
    except PlatformNoAnswer:
        # The platform may have rotated the refresh token and its answer, the only copy of
        # the new one, is lost. The reference is silent on a spent token presented again:
        # a platform that keeps a short reuse interval exchanges it again, one that does
        # not revokes the grant, now or at any later try alike. So once more, at once:
        # within the interval where there is one (the sandbox's reading B of
        # refresh_reuse), the same outcome where there is not (reading A).
        time.sleep(LOST_ANSWER_PAUSE_SECONDS)
        return _call(send, require_refresh_token=False)
