"""The sandbox's OAuth server over real HTTP: authorize page, token endpoint, refresh."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session

from tests.sandbox.conftest import (
    CLIENT_ID,
    CLIENT_SECRET,
    REDIRECT_URL,
    csrf_token,
    exchange_code,
    hidden_fields,
    refresh,
)
from tests.support.sandbox_process import SandboxProcess


def _oauth_session(**kwargs: object) -> OAuth2Session:
    return OAuth2Session(
        CLIENT_ID, CLIENT_SECRET, token_endpoint_auth_method="client_secret_post", **kwargs
    )


def _authorize_url(sandbox: SandboxProcess, **params: str) -> str:
    query = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_url": REDIRECT_URL,
        "state": "st-123",
        **params,
    }
    return requests.Request("GET", sandbox.api_url + "/authorize", params=query).prepare().url


def _sign_in(
    browser: requests.Session, page: requests.Response, password: str
) -> requests.Response:
    form = hidden_fields(page.text)
    form.update(
        csrfmiddlewaretoken=csrf_token(page.text),
        username="alice",
        password=password,
        action="signin",
    )
    return browser.post(page.url, data=form, allow_redirects=False, timeout=10)


def _decide(
    browser: requests.Session, consent: requests.Response, action: str
) -> requests.Response:
    form = hidden_fields(consent.text)
    form.update(csrfmiddlewaretoken=csrf_token(consent.text), action=action)
    return browser.post(consent.url, data=form, allow_redirects=False, timeout=10)


def _query(location: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(location).query)


def test_browser_authorize_code_token_refresh_cycle(accounts: SandboxProcess) -> None:
    # given a marketplace's authorization URL built by Authlib (redirect_url, not redirect_uri)
    oauth = _oauth_session()
    url, state = oauth.create_authorization_url(
        accounts.api_url + "/authorize", redirect_url=REDIRECT_URL
    )
    assert "redirect_uri" not in url
    browser = requests.Session()

    # when the seller signs in and approves
    page = browser.get(url, timeout=10)
    assert page.status_code == 200
    assert 'name="username"' in page.text
    assert ">Sign in</button>" in page.text
    assert {"sandbox_csrftoken"} <= set(browser.cookies.keys())
    assert "csrftoken" not in browser.cookies
    consent = _sign_in(browser, page, "alice-pw")
    assert consent.status_code == 200
    assert "Marketplace X wants to access your orders" in consent.text
    assert ">Approve</button>" in consent.text
    assert ">Deny</button>" in consent.text
    assert "sandbox_sessionid" in browser.cookies
    approved = _decide(browser, consent, "approve")

    # then the browser goes back to the marketplace with a code and the same state
    assert approved.status_code == 302
    location = approved.headers["Location"]
    assert location.startswith(REDIRECT_URL + "?")
    assert _query(location)["state"] == [state]

    # and the code buys a token pair, whose refresh token rotates
    token = oauth.fetch_token(
        accounts.api_url + "/access_token",
        grant_type="authorization_code",
        code=_query(location)["code"][0],
    )
    assert token["token_type"] == "Bearer"
    assert token["expires_in"] == 3600
    refreshed = oauth.refresh_token(
        accounts.api_url + "/access_token", refresh_token=token["refresh_token"]
    )
    assert refreshed["access_token"] != token["access_token"]
    assert refreshed["refresh_token"] != token["refresh_token"]
    orders = requests.get(
        accounts.api_url + "/orders",
        headers={"Authorization": f"Bearer {refreshed['access_token']}"},
        timeout=10,
    )
    assert orders.status_code == 200

    state_now = accounts.state()
    assert state_now["counters"]["token_requests"] == {
        "authorization_code": 1,
        "refresh_token": 1,
    }
    [grant] = state_now["grants"]
    assert grant["seller"] == "alice"
    assert grant["refresh_count"] == 1
    assert grant["revoked"] is False
    assert "access_token" not in str(state_now["grants"])


def test_second_visit_goes_straight_to_consent(accounts: SandboxProcess) -> None:
    browser = requests.Session()
    page = browser.get(_authorize_url(accounts), timeout=10)
    _sign_in(browser, page, "alice-pw")
    again = browser.get(_authorize_url(accounts, state="other"), timeout=10)
    assert ">Approve</button>" in again.text


def test_wrong_password_stays_on_sign_in(accounts: SandboxProcess) -> None:
    browser = requests.Session()
    page = browser.get(_authorize_url(accounts), timeout=10)
    response = _sign_in(browser, page, "nope")
    assert response.status_code == 200
    assert "Wrong username or password" in response.text
    assert "Location" not in response.headers


def test_deny_redirects_with_access_denied(accounts: SandboxProcess) -> None:
    browser = requests.Session()
    page = browser.get(_authorize_url(accounts), timeout=10)
    consent = _sign_in(browser, page, "alice-pw")
    denied = _decide(browser, consent, "deny")
    assert denied.status_code == 302
    query = _query(denied.headers["Location"])
    assert query == {"error": ["access_denied"], "state": ["st-123"]}
    assert accounts.state()["grants"] == []


def test_approve_without_csrf_token_is_refused(accounts: SandboxProcess) -> None:
    browser = requests.Session()
    page = browser.get(_authorize_url(accounts), timeout=10)
    consent = _sign_in(browser, page, "alice-pw")
    form = hidden_fields(consent.text)
    form.pop("csrfmiddlewaretoken", None)
    response = browser.post(consent.url, data={**form, "action": "approve"}, allow_redirects=False)
    assert response.status_code == 403
    assert "Location" not in response.headers


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"client_id": "who-is-this"}, "Unknown client_id"),
        ({"redirect_url": "https://evil.example/steal"}, "not registered"),
        ({"redirect_url": REDIRECT_URL + "/extra"}, "not registered"),
        ({"redirect_url": ""}, "redirect_url is required"),
    ],
)
def test_untrusted_client_or_redirect_gets_an_error_page_never_a_redirect(
    accounts: SandboxProcess, params: dict[str, str], message: str
) -> None:
    response = requests.get(_authorize_url(accounts, **params), allow_redirects=False, timeout=10)
    assert response.status_code == 400
    assert "Location" not in response.headers
    assert message in response.text


def test_missing_state_redirects_with_invalid_request(accounts: SandboxProcess) -> None:
    url = _authorize_url(accounts, state="")
    response = requests.get(url, allow_redirects=False, timeout=10)
    assert response.status_code == 302
    assert _query(response.headers["Location"])["error"] == ["invalid_request"]


def test_bad_response_type_redirects_with_unsupported_response_type(
    accounts: SandboxProcess,
) -> None:
    url = _authorize_url(accounts, response_type="token")
    response = requests.get(url, allow_redirects=False, timeout=10)
    assert response.status_code == 302
    query = _query(response.headers["Location"])
    assert query["error"] == ["unsupported_response_type"]
    assert query["state"] == ["st-123"]


def test_code_is_single_use(accounts: SandboxProcess) -> None:
    code = accounts.mint_code(CLIENT_ID, "alice", REDIRECT_URL)
    assert exchange_code(accounts, code).status_code == 200
    again = exchange_code(accounts, code)
    assert again.status_code == 401
    assert again.json()["error"] == "invalid_grant"
    assert accounts.state()["counters"]["code_reuse"] == 1


def test_code_expires_after_five_minutes(accounts: SandboxProcess) -> None:
    code = accounts.mint_code(CLIENT_ID, "alice", REDIRECT_URL)
    accounts.shift_clock(301)
    response = exchange_code(accounts, code)
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_grant"
    assert "expired" in response.json()["error_description"]


@pytest.mark.parametrize(
    ("client_id", "secret"), [(CLIENT_ID, "wrong-secret"), ("unknown-client", CLIENT_SECRET)]
)
def test_bad_client_credentials_are_invalid_client(
    accounts: SandboxProcess, client_id: str, secret: str
) -> None:
    code = accounts.mint_code(CLIENT_ID, "alice", REDIRECT_URL)
    response = requests.post(
        accounts.api_url + "/access_token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": client_id,
            "client_secret": secret,
        },
        timeout=10,
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    # the code was not spent by the failed attempt
    assert exchange_code(accounts, code).status_code == 200


def test_http_basic_client_authentication_is_accepted(accounts: SandboxProcess) -> None:
    code = accounts.mint_code(CLIENT_ID, "alice", REDIRECT_URL)
    response = requests.post(
        accounts.api_url + "/access_token",
        data={"grant_type": "authorization_code", "code": code},
        auth=(CLIENT_ID, CLIENT_SECRET),
        timeout=10,
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("reading", "form_taken", "json_taken"),
    [("A", True, True), ("B", False, True), ("C", True, False)],
)
def test_the_token_body_is_form_json_or_either_as_switched(
    accounts: SandboxProcess, reading: str, form_taken: bool, json_taken: bool
) -> None:
    assert accounts.control("POST", "/token-body", {"reading": reading}) == {"reading": reading}
    for as_json, taken in ((False, form_taken), (True, json_taken)):
        fields = {
            "grant_type": "authorization_code",
            "code": accounts.mint_code(CLIENT_ID, "alice", REDIRECT_URL),
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
        }
        body = {"json": fields} if as_json else {"data": fields}
        response = requests.post(accounts.api_url + "/access_token", timeout=10, **body)
        if taken:
            assert response.status_code == 200, response.text
            assert response.json()["token_type"] == "Bearer"
        else:
            assert response.status_code == 400
            assert response.json()["error"] == "invalid_request"
            wanted = "application/json" if reading == "B" else "x-www-form-urlencoded"
            assert wanted in response.json()["error_description"]


def test_a_json_token_body_must_be_an_object_of_strings(accounts: SandboxProcess) -> None:
    url = accounts.api_url + "/access_token"
    listed = requests.post(url, json=[CLIENT_ID], timeout=10)
    assert listed.status_code == 400
    assert "JSON object" in listed.json()["error_description"]
    numbers = requests.post(
        url, json={"grant_type": "refresh_token", "refresh_token": 7}, timeout=10
    )
    assert numbers.status_code == 400
    assert numbers.json()["error_description"] == "must be strings: refresh_token"
    refused = requests.post(accounts.control_url + "/token-body", json={"reading": "D"}, timeout=10)
    assert refused.status_code == 400


def test_unknown_grant_type_is_unsupported(accounts: SandboxProcess) -> None:
    response = requests.post(
        accounts.api_url + "/access_token",
        data={"grant_type": "password", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET},
        timeout=10,
    )
    assert response.status_code == 400
    assert response.json()["error"] == "unsupported_grant_type"


def test_revoked_grant_refuses_refresh_and_api_calls(accounts: SandboxProcess) -> None:
    tokens = exchange_code(accounts, accounts.mint_code(CLIENT_ID, "alice")).json()
    assert accounts.revoke("alice") == 1

    response = refresh(accounts, tokens["refresh_token"])
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_grant"
    api = requests.get(
        accounts.api_url + "/orders",
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
        timeout=10,
    )
    assert api.status_code == 401
    assert api.json()["error"] == "invalid_token"
    assert accounts.state()["grants"][0]["revoked"] is True


def test_reusing_a_rotated_refresh_token_revokes_the_grant(accounts: SandboxProcess) -> None:
    # given a grant whose refresh token was rotated once
    first = exchange_code(accounts, accounts.mint_code(CLIENT_ID, "alice")).json()
    second = refresh(accounts, first["refresh_token"]).json()

    # when the spent refresh token is presented again
    reuse = refresh(accounts, first["refresh_token"])

    # then it is refused, counted, and the whole grant is dead
    assert reuse.status_code == 401
    assert reuse.json()["error"] == "invalid_grant"
    state = accounts.state()
    [grant] = state["grants"]
    assert grant["revoked"] is True
    assert grant["revoked_reason"] == "refresh_token_reuse"
    assert grant["reuse_count"] == 1
    assert state["counters"]["refresh_token_reuse"] == 1
    assert refresh(accounts, second["refresh_token"]).status_code == 401
    api = requests.get(
        accounts.api_url + "/orders",
        headers={"Authorization": f"Bearer {second['access_token']}"},
        timeout=10,
    )
    assert api.status_code == 401


def test_without_rotation_the_refresh_token_is_kept(accounts: SandboxProcess) -> None:
    # given rotation switched off
    accounts.set_rotation(False)
    stored: list[dict] = []
    oauth = _oauth_session(update_token=lambda token, **_: stored.append(dict(token)))
    first = oauth.fetch_token(
        accounts.api_url + "/access_token",
        grant_type="authorization_code",
        code=accounts.mint_code(CLIENT_ID, "alice"),
    )

    # when refreshing, the response omits refresh_token
    raw = refresh(accounts, first["refresh_token"]).json()
    assert "refresh_token" not in raw

    # then Authlib keeps the old one, which still works
    oauth.refresh_token(accounts.api_url + "/access_token", refresh_token=first["refresh_token"])
    assert stored[-1]["refresh_token"] == first["refresh_token"]
    assert refresh(accounts, first["refresh_token"]).status_code == 200
    assert accounts.state()["grants"][0]["refresh_count"] == 3


def test_access_token_expires_after_an_hour_of_sandbox_time(accounts: SandboxProcess) -> None:
    tokens = exchange_code(accounts, accounts.mint_code(CLIENT_ID, "alice")).json()
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    accounts.shift_clock(3599)
    assert requests.get(accounts.api_url + "/orders", headers=headers, timeout=10).ok
    accounts.shift_clock(2)
    expired = requests.get(accounts.api_url + "/orders", headers=headers, timeout=10)
    assert expired.status_code == 401
    assert "expired" in expired.json()["error_description"]
    assert refresh(accounts, tokens["refresh_token"]).status_code == 200


def test_expire_tokens_now_then_refresh(accounts: SandboxProcess) -> None:
    tokens = exchange_code(accounts, accounts.mint_code(CLIENT_ID, "alice")).json()
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    assert accounts.expire_tokens("alice") == 1
    assert (
        requests.get(accounts.api_url + "/orders", headers=headers, timeout=10).status_code == 401
    )
    new = refresh(accounts, tokens["refresh_token"]).json()
    fresh = {"Authorization": f"Bearer {new['access_token']}"}
    assert requests.get(accounts.api_url + "/orders", headers=fresh, timeout=10).ok


def test_refresh_token_expires_after_a_year(accounts: SandboxProcess) -> None:
    tokens = exchange_code(accounts, accounts.mint_code(CLIENT_ID, "alice")).json()
    accounts.shift_clock(366 * 24 * 3600)
    response = refresh(accounts, tokens["refresh_token"])
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    "header", ["", "Bearer", "Bearer not-a-token", "Basic bXAtdGVzdDpzZWNyZXQ="]
)
def test_order_interface_needs_a_valid_bearer_token(accounts: SandboxProcess, header: str) -> None:
    response = requests.get(
        accounts.api_url + "/orders",
        headers={"Authorization": header} if header else {},
        timeout=10,
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_token"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
