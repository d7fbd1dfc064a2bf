"""Every Platform call the app makes carries the API token in both ``x-api-key`` and
``Authorization: Bearer`` (the interface document lists both as required; a platform
refuses a call missing either with 401). Checked against the sandbox process, which
refuses such a call and counts it as an ``api_token_headers`` violation: a flow through
every call of the Authentication and Platform clients, then the sandbox's request log
and violations."""

from __future__ import annotations

from typing import Any

import pytest

from marketplace.platform.auth_api import AuthApi, login_finish, login_start
from marketplace.platform.exports import ExportsApi
from marketplace.platform.imports import Delimiters, ImportsApi, file_map_body
from marketplace.platform.transport import ApiKeyTransport
from tests.sandbox.platform_api.test_platform_imports import (
    FILE_PASSWORD,
    FILE_USER,
    STATUS_CSV,
    FileServer,
)
from tests.support.sandbox_process import SandboxProcess

pytestmark = pytest.mark.django_db(transaction=True)

USERNAME, PASSWORD, EMAIL = "headers-api", "headers-api-pass", "headers@mp.example"


def _every_call(sandbox: SandboxProcess, files: FileServer) -> ApiKeyTransport:
    db = sandbox.db_create(
        "Header catalog",
        account_name="Header Shop",
        rows=[{"id": "A-1", "title": "Mug"}],
        fields=["id", "title"],
    )
    sandbox.api_user_create(USERNAME, PASSWORD, EMAIL, account_ids=[str(db["account_id"])])
    login_start(username=USERNAME, password=PASSWORD)
    token = login_finish(
        username=USERNAME, password=PASSWORD, code=sandbox.twofa_code(EMAIL), token_name="app"
    )
    transport = ApiKeyTransport(token=token, api_user=USERNAME)
    auth, exports, imports = AuthApi(transport), ExportsApi(transport), ImportsApi(transport)
    db_id = str(db["id"])

    assert [a.name for a in auth.accounts()] == ["Header Shop"]
    assert [d.id for d in auth.databases(account_id=str(db["account_id"]))] == [db_id]

    export = exports.add(db_id=db_id, export={"name": "feed", "file_name": "feed.csv"})
    export_id = str(export["id"])
    assert exports.list(db_id=db_id)[0]["id"] == export_id
    assert exports.get(db_id=db_id, export_id=export_id)["name"] == "feed"
    exports.update(db_id=db_id, export_id=export_id, changes={"row_limit": "1"})
    exports.schedule(db_id=db_id, export_id=export_id, day="*", hour="3", minute="5")
    exports.run(db_id=db_id, export_id=export_id)

    settings: dict[str, Any] = {
        "name": "status",
        "join_type": "join_info",
        "file_name": "s.csv",
        "file_location": "url",
        "url": files.serve("/s.csv", STATUS_CSV),
        "username": FILE_USER,
        "password": FILE_PASSWORD,
        "join_key": "id",
    }
    created = imports.create(db_id=db_id, settings=settings)
    import_id = str(created["id"])
    imports.update(db_id=db_id, import_id=import_id, changes={"timeout": "5"})
    imports.delimiters(db_id=db_id, import_id=import_id, delimiters=Delimiters())
    body = file_map_body(delimiters=Delimiters(), maps={"SKU": "id"}, clean_file_headers=False)
    imports.file_map(db_id=db_id, import_id=import_id, body=body)
    imports.schedule(db_id=db_id, import_id=import_id, paused=True)
    assert imports.get(db_id=db_id, import_id=import_id)["name"] == "status"
    assert [i["id"] for i in imports.list(db_id=db_id)] == [import_id]
    assert imports.auto_detected(db_id=db_id) == []
    imports.delete(db_id=db_id, import_id=import_id)
    exports.delete(db_id=db_id, export_id=export_id)
    return transport


def test_every_platform_call_carries_the_token_in_both_headers(
    sandbox: SandboxProcess, settings: Any
) -> None:
    sandbox.reset()
    settings.PLATFORM_API_BASE_URL = sandbox.platform_url
    files = FileServer().start()
    try:
        _every_call(sandbox, files)
    finally:
        files.stop()

    logged = [e for e in sandbox.requests_log(limit=2000) if e["path"].startswith("/api.php/")]
    token_calls = [e for e in logged if e["path"] != "/api.php/login"]
    # Every call of the flow was logged: 2 accounts, 7 exports, 9 imports.
    assert len(token_calls) == 18
    for entry in token_calls:
        where = (entry["method"], entry["path"], entry["status"])
        assert entry["authorization"] == "Bearer ***", where
        assert entry["status"] < 400, where
    logins = [e for e in logged if e["path"] == "/api.php/login"]
    assert [e["status"] for e in logins] == [200, 200]
    assert sandbox.violations()["by_kind"]["api_token_headers"] == 0


def test_a_call_without_the_bearer_header_would_be_refused_and_counted(
    sandbox: SandboxProcess, settings: Any
) -> None:
    """The check above can fail: the same token in x-api-key alone is a 401 and a
    violation (what the app's calls were before they sent both)."""
    sandbox.reset()
    settings.PLATFORM_API_BASE_URL = sandbox.platform_url
    sandbox.api_user_create(USERNAME, PASSWORD, EMAIL, accounts=["Header Shop"])
    token = sandbox.platform_login(USERNAME, PASSWORD, EMAIL, name="app")

    response = sandbox.http.get(
        sandbox.platform_url + "/user/list-accounts", headers={"x-api-key": token}, timeout=10
    )

    assert response.status_code == 401
    assert response.json() == {"status": "fail", "message": "Invalid API token"}
    violations = sandbox.violations()
    assert violations["by_kind"]["api_token_headers"] == 1
    assert violations["recent"][0]["client_id"] == "api-token:app"
