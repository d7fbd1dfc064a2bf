"""The Authentication API over real HTTP: two-step login with an e-mailed code, named API
tokens in x-api-key and Authorization: Bearer, revocation, the accounts a user reaches and
their databases."""

from __future__ import annotations

import requests

from tests.sandbox.platform_client import EMAIL, PASSWORD, USERNAME, platform_for
from tests.support.sandbox_process import SandboxProcess


def _login(sandbox: SandboxProcess, **body: str) -> requests.Response:
    payload = {"username": USERNAME, "password": PASSWORD, "method": "token", **body}
    return requests.post(sandbox.platform_url + "/login", json=payload, timeout=10)


def _both(token: str) -> dict[str, str]:
    return {"x-api-key": token, "Authorization": f"Bearer {token}"}


def _user(sandbox: SandboxProcess) -> None:
    sandbox.api_user_create(USERNAME, PASSWORD, EMAIL, accounts=["Shop One"])


def test_login_sends_a_code_by_email_then_gives_a_named_token(sandbox: SandboxProcess) -> None:
    _user(sandbox)

    first = _login(sandbox)
    assert first.status_code == 200
    assert first.json()["status"] == "success"
    assert "sent" in first.json()["message"]
    assert "token" not in first.json()
    email = sandbox.outbox(to=EMAIL)[0]
    assert email["code"].isdigit()
    assert len(email["code"]) == 6
    assert email["code"] in email["body"]

    second = _login(sandbox, twofa_token=email["code"], name="production")
    assert second.status_code == 200
    assert second.json()["status"] == "success"
    token = second.json()["token"]
    accounts = requests.get(
        sandbox.platform_url + "/user/accounts", headers=_both(token), timeout=10
    )
    assert accounts.status_code == 200
    assert [a["account_name"] for a in accounts.json()] == ["Shop One"]
    users = sandbox.control("GET", "/api-users")["users"]
    assert [t["name"] for t in users[0]["tokens"]] == ["production"]


def test_wrong_password_is_invalid_authentication_and_sends_nothing(
    sandbox: SandboxProcess,
) -> None:
    _user(sandbox)

    response = _login(sandbox, password="not-it")

    assert response.status_code == 400
    assert response.json() == {"status": "fail", "message": "Invalid Authentication"}
    assert sandbox.outbox(to=EMAIL) == []


def test_wrong_code_is_invalid_authentication(sandbox: SandboxProcess) -> None:
    _user(sandbox)
    _login(sandbox)
    code = sandbox.twofa_code(EMAIL)
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"

    response = _login(sandbox, twofa_token=wrong)

    assert response.status_code == 400
    assert response.json()["message"] == "Invalid Authentication"


def test_right_code_with_wrong_password_is_refused(sandbox: SandboxProcess) -> None:
    _user(sandbox)
    _login(sandbox)

    response = _login(sandbox, password="not-it", twofa_token=sandbox.twofa_code(EMAIL))

    assert response.status_code == 400
    assert response.json()["message"] == "Invalid Authentication"


def test_a_code_works_once(sandbox: SandboxProcess) -> None:
    _user(sandbox)
    _login(sandbox)
    code = sandbox.twofa_code(EMAIL)

    assert _login(sandbox, twofa_token=code).status_code == 200
    again = _login(sandbox, twofa_token=code)

    assert again.status_code == 400
    assert again.json()["message"] == "Invalid Authentication"


def test_a_code_expires_after_ten_minutes(sandbox: SandboxProcess) -> None:
    _user(sandbox)
    _login(sandbox)
    code = sandbox.twofa_code(EMAIL)

    sandbox.shift_clock(10 * 60 + 1)
    response = _login(sandbox, twofa_token=code)

    assert response.status_code == 400
    assert response.json()["message"] == "Invalid Authentication"


def test_a_new_code_replaces_the_previous_one(sandbox: SandboxProcess) -> None:
    _user(sandbox)
    _login(sandbox)
    old = sandbox.twofa_code(EMAIL)
    _login(sandbox)
    new = sandbox.twofa_code(EMAIL)

    if old != new:  # one in a million they coincide
        assert _login(sandbox, twofa_token=old).status_code == 400
    assert _login(sandbox, twofa_token=new).status_code == 200


def test_login_names_missing_fields_and_refuses_other_methods(sandbox: SandboxProcess) -> None:
    _user(sandbox)

    missing = requests.post(
        sandbox.platform_url + "/login", json={"username": USERNAME}, timeout=10
    )
    cookie = _login(sandbox, method="cookie")

    assert missing.status_code == 400
    assert missing.json()["message"].startswith("password")
    assert cookie.status_code == 400
    assert cookie.json()["message"].startswith("method")


def test_calls_need_the_token_in_both_headers_else_401_and_a_violation(
    sandbox: SandboxProcess,
) -> None:
    api = platform_for(sandbox)
    url = sandbox.platform_url + "/user/list-accounts"
    before = sandbox.violations()["by_kind"]["api_token_headers"]

    refused = {
        "without": requests.get(url, timeout=10),
        "key_only": requests.get(url, headers={"x-api-key": api.token}, timeout=10),
        "bearer_only": requests.get(
            url, headers={"Authorization": f"Bearer {api.token}"}, timeout=10
        ),
        "differ": api.call("GET", "/user/list-accounts", headers={"Authorization": "Bearer other"}),
        "unknown": requests.get(url, headers=_both("nope"), timeout=10),
    }
    both_equal = api.call("GET", "/user/list-accounts")

    for name, response in refused.items():
        assert response.status_code == 401, name
        assert response.json() == {"status": "fail", "message": "Invalid API token"}, name
    assert both_equal.status_code == 200
    violations = sandbox.violations()
    # Four header breaches; an unknown token in both headers is not one.
    assert violations["by_kind"]["api_token_headers"] == before + 4
    recent = [v for v in violations["recent"] if v["kind"] == "api_token_headers"][:4]
    assert recent[0]["detail"].endswith("x-api-key and Authorization: Bearer name different tokens")
    assert recent[0]["seller"] == USERNAME
    assert recent[1]["detail"].endswith("Authorization: Bearer without x-api-key")
    assert recent[2]["detail"].endswith("x-api-key without Authorization: Bearer")
    assert recent[3]["detail"].endswith("neither x-api-key nor Authorization: Bearer")
    assert recent[3]["seller"] == ""


def test_user_accounts_takes_x_api_key_alone_as_the_interface_table_lists_it(
    sandbox: SandboxProcess,
) -> None:
    api = platform_for(sandbox)
    before = sandbox.violations()["by_kind"]["api_token_headers"]
    key_only = {"x-api-key": api.token}

    accounts = requests.get(sandbox.platform_url + "/user/accounts", headers=key_only, timeout=10)
    with_bearer = api.call("GET", "/user/accounts")
    other_bearer = api.call("GET", "/user/accounts", headers={"Authorization": "Bearer other"})
    listed = requests.get(
        sandbox.platform_url + "/user/list-accounts", headers=key_only, timeout=10
    )
    account_id = accounts.json()[0]["id"]
    dbs = requests.get(
        sandbox.platform_url + f"/accounts/{account_id}/dbs", headers=key_only, timeout=10
    )

    assert accounts.status_code == 200, accounts.text
    assert accounts.json() == with_bearer.json()
    assert other_bearer.status_code == 401  # two different tokens stay refused
    assert listed.status_code == 401
    assert dbs.status_code == 401
    # Only the other two calls (and the differing tokens) are header breaches.
    assert sandbox.violations()["by_kind"]["api_token_headers"] == before + 3


def test_login_needs_no_token_headers(sandbox: SandboxProcess) -> None:
    _user(sandbox)
    before = sandbox.violations()["by_kind"]["api_token_headers"]

    assert _login(sandbox).status_code == 200

    assert sandbox.violations()["by_kind"]["api_token_headers"] == before


def test_a_revoked_token_answers_401_and_other_tokens_keep_working(
    sandbox: SandboxProcess,
) -> None:
    api = platform_for(sandbox, token_name="staging")
    other = sandbox.platform_login(USERNAME, PASSWORD, EMAIL, name="production")

    assert sandbox.api_token_revoke(token_name="staging") == 1

    revoked = api.call("GET", "/user/accounts")
    assert revoked.status_code == 401
    assert revoked.json() == {"status": "fail", "message": "Invalid API token"}
    still = requests.get(sandbox.platform_url + "/user/accounts", headers=_both(other), timeout=10)
    assert still.status_code == 200


def test_revoking_by_username_ends_every_token_of_the_user(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox)
    sandbox.platform_login(USERNAME, PASSWORD, EMAIL, name="second")

    assert sandbox.api_token_revoke(username=USERNAME) == 2
    assert api.call("GET", "/user/accounts").status_code == 401


def test_accounts_listing_paginated_and_databases_of_an_account(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox)
    sandbox.api_user_create(
        USERNAME, PASSWORD, EMAIL, account_ids=[api.account_id], accounts=["Other Shop"]
    )

    listed = api.call("GET", "/user/list-accounts", params={"results_per_page": "1", "page": "2"})
    found = api.call("GET", "/user/list-accounts", params={"query": "other"})
    dbs = api.call("GET", f"/accounts/{api.account_id}/dbs")

    assert listed.status_code == 200
    assert listed.json()["pagination"] == {
        "page": "2",
        "results_per_page": "1",
        "total_results": "2",
        "total_pages": "2",
    }
    assert [a["account_name"] for a in listed.json()["accounts"]] == ["Other Shop"]
    assert [a["account_name"] for a in found.json()["accounts"]] == ["Other Shop"]
    assert dbs.status_code == 200
    assert dbs.json() == [
        {"id": api.db_id, "name": "Small catalog", "import_status": "none", "export_status": "none"}
    ]


def test_another_accounts_databases_are_refused(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox)
    stranger = sandbox.db_create("Not yours", account_name="Stranger Shop")

    dbs = api.call("GET", f"/accounts/{stranger['account_id']}/dbs")
    exports = api.call("GET", f"/dbs/{stranger['id']}/exports")
    missing = api.call("GET", "/dbs/99999/exports")

    assert dbs.status_code == 403
    assert exports.status_code == 403
    assert missing.status_code == 404
    assert missing.json()["status"] == "fail"


def test_unknown_query_parameters_are_refused_by_name(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox)

    response = api.call("GET", "/user/list-accounts", params={"per_page": "5"})

    assert response.status_code == 400
    assert "per_page" in response.json()["message"]
