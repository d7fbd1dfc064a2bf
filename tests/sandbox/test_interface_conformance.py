"""The sandbox against the interface document (``platform-interface.md``), row by row of
its tables that can be checked over HTTP: methods, paths, the headers each call needs and
the shapes of the answers. (Date-times: ``test_date_times``; the contracts' further rows:
the tests of each room.)

Where the document and the contracts differ: the order interface's OAuth step is
``/authorize`` in the contract (from the platform's reference), ``/authorization`` in the
document's table; the sandbox serves the reference's path.
"""

from __future__ import annotations

from typing import Any

import requests

from tests.sandbox.conftest import Api, order_body, refresh
from tests.sandbox.orders_v2.v2_client import seller_api
from tests.sandbox.platform_api.test_platform_imports import (
    DELIMITERS,
    FILE_PASSWORD,
    FILE_USER,
    file_map_body,
    files,
)
from tests.sandbox.platform_client import EMAIL, PASSWORD, USERNAME, platform_for
from tests.support.sandbox_process import SandboxProcess

__all__ = ["files"]  # a fixture used below

# The Export table: field -> the JSON types the document allows.
STRING, NULLABLE = (str,), (str, type(None))
EXPORT_FIELDS: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(
        (
            "id", "db_id", "name", "file_name", "protocol", "username", "password", "ftp_url",
            "export_selector", "running", "cxn_id", "export_format", "file_header",
            "file_footer", "threshold", "include_column_names", "json_minify_type",
            "export_encoding", "delimiter", "compression", "quoted_fields", "timestamp",
            "enclosure", "escape", "show_empty_tags", "show_empty_parent_tags",
            "xml_write_document_tag", "use_cdata", "zip_inner_file_name", "max_attempts",
            "time_between_attempts", "timeout", "row_limit", "row_sort", "row_order",
            "legacy_workers", "blocked", "export_index_field", "destination",
            "destination_region", "created_at",
        ),
        STRING,
    ),
    **dict.fromkeys(("cron", "next_run_time", "worker_pid", "worker_hostname"), NULLABLE),
    "protocol_info": (list, dict),
    "deduplicate_field_name": (list,),
    "strip_characters": (dict, list),
    "export_fields": (dict,),
}  # fmt: skip
ZERO_ONE = (
    "running", "include_column_names", "quoted_fields", "show_empty_tags",
    "show_empty_parent_tags", "xml_write_document_tag", "use_cdata", "blocked",
)  # fmt: skip
FILE_MAP_FIELDS = (
    "encoding", "separator", "enclosure", "escaper", "maps", "ignore_join", "name_based_maps",
    "encode_source_file_keys", "clean_file_headers", "file_type",
)  # fmt: skip


def _login(sandbox: SandboxProcess, **body: Any) -> requests.Response:
    return requests.post(sandbox.platform_url + "/login", json=body, timeout=10)


# -- Authentication API ------------------------------------------------------------------


def test_login_request_and_responses_and_the_two_factor_step(sandbox: SandboxProcess) -> None:
    db = sandbox.db_create("Conformance", account_name="Conformance Shop", rows=[])
    sandbox.api_user_create(USERNAME, PASSWORD, EMAIL, account_ids=[str(db["account_id"])])
    credentials = {"username": USERNAME, "password": PASSWORD, "method": "token"}

    first = _login(sandbox, **credentials)  # without twofa_token: a code is e-mailed
    assert first.status_code == 200
    assert isinstance(first.json()["message"], str)
    second = _login(sandbox, **credentials, twofa_token=sandbox.twofa_code(EMAIL), name="one")
    assert second.status_code == 200
    assert second.json()["status"] == "success"
    assert isinstance(second.json()["token"], str)
    # name labels the token: one user may hold several
    _login(sandbox, **credentials)
    other = _login(sandbox, **credentials, twofa_token=sandbox.twofa_code(EMAIL), name="two")
    assert other.json()["token"] != second.json()["token"]
    # wrong credentials or two-factor token: 400, "Invalid Authentication"
    wrong_password = _login(sandbox, **{**credentials, "password": "nope"})
    _login(sandbox, **credentials)
    wrong_code = _login(sandbox, **credentials, twofa_token="000000")
    for refused in (wrong_password, wrong_code):
        assert refused.status_code == 400
        assert refused.json()["message"] == "Invalid Authentication"


def test_user_accounts_with_the_x_api_key_header(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox)
    response = requests.get(
        sandbox.platform_url + "/user/accounts", headers={"x-api-key": api.token}, timeout=10
    )
    assert response.status_code == 200, response.text
    assert [a["id"] for a in response.json()] == [api.account_id]
    assert all(isinstance(a["account_name"], str) for a in response.json())


def test_get_token_with_http_basic_gives_an_order_api_token(sandbox: SandboxProcess) -> None:
    sandbox.create_seller("alice", "alice-pw")
    seller = seller_api(sandbox, "alice")
    assert isinstance(seller.token, str)
    assert seller.token
    assert seller.get_token(auth=("alice-api", "wrong")).status_code == 401


# -- Platform API: exports ---------------------------------------------------------------


def _export_body() -> dict[str, Any]:
    return {
        "name": "feed",
        "file_name": "feed.csv",
        "protocol": "http",
        "host": "http://127.0.0.1:9/feeds/",
        "export_fields": [{"field_name": "id", "export_field_name": "sku"}],
    }


def test_export_operations_and_the_export_object(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox)
    exports = f"/dbs/{api.db_id}/exports"

    added = api.call("POST", exports, json=_export_body())  # add: the export
    assert added.status_code == 200, added.text
    export_id = added.json()["id"]
    one = f"{exports}/{export_id}"
    listed = api.call("GET", exports)  # list: the exports
    assert listed.status_code == 200
    assert [e["id"] for e in listed.json()] == [export_id]
    # update: a free-form object, request-only fields included; 200 with the Export
    update = {
        "row_limit": 10,
        "tags": ["marketplace"],
        "validate_custom_input": False,
        "sortable_fields": {"field1": {"name": "id", "value": "id", "source": "db"}},
    }
    updated = api.call("PUT", one, json=update)
    assert updated.status_code == 200, updated.text
    export = updated.json()
    for name, types in EXPORT_FIELDS.items():
        assert name in export, name
        assert isinstance(export[name], types), (name, export[name])
    for name in ZERO_ONE:
        assert export[name] in ("0", "1"), name
    assert export["row_limit"] == "10"  # a number in the request, a string in the answer
    assert export["password"] == ""  # returned (the interface returns it)
    (field,) = export["export_fields"].values()
    assert set(field) >= {"id", "export_id", "field_name", "export_field_name", "sort_order"}
    assert all(isinstance(v, str) for v in field.values())
    # schedule in cron format (PUT), run (POST)
    scheduled = api.call("PUT", f"{one}/schedule", json={"day": "*", "hour": "2", "minute": "0"})
    assert scheduled.status_code == 200
    assert scheduled.json()["cron"] == "0 2 * * *"
    assert api.call("POST", f"{one}/run").status_code in (200, 202)
    # delete: 200 with an empty JSON object
    deleted = api.call("DELETE", one)
    assert deleted.status_code == 200
    assert deleted.json() == {}


def test_export_and_import_calls_need_both_headers(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox)
    for path in (f"/dbs/{api.db_id}/exports", f"/dbs/{api.db_id}/imports"):
        url = sandbox.platform_url + path
        key_only = requests.get(url, headers={"x-api-key": api.token}, timeout=10)
        bearer_only = requests.get(
            url, headers={"Authorization": f"Bearer {api.token}"}, timeout=10
        )
        assert (key_only.status_code, bearer_only.status_code) == (401, 401), path
        assert api.call("GET", path).status_code == 200, path


# -- Platform API: imports ---------------------------------------------------------------


def _import_body() -> dict[str, Any]:
    return {
        "name": "status",
        "join_type": "join_info",
        "file_name": "s.csv",
        "file_location": "url",
        "url": "http://127.0.0.1:9/s.csv",
        "join_key": "id",
    }


def test_import_operations_delimiters_and_file_map(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox)
    imports = f"/dbs/{api.db_id}/imports"

    created = api.call("POST", imports, json=_import_body())  # create
    assert created.status_code == 200, created.text
    one = f"{imports}/{created.json()['id']}"
    assert api.call("GET", imports).json()[0]["id"] == created.json()["id"]  # list
    assert api.call("GET", one).json()["name"] == "status"  # one by id
    updated = api.call("POST", one, json={"timeout": "5"})  # update is POST
    assert updated.status_code == 200
    scheduled = api.call("PUT", f"{one}/schedule", json={"day": "1", "hour": "3", "minute": "5"})
    assert scheduled.json()["cron"] == "5 3 * * 1"
    assert api.call("GET", f"{imports}/auto_detected").status_code == 200
    # file_map before delimiters is refused; then delimiters, then the file map
    assert api.call("PUT", f"{one}/file_map", json=file_map_body({"id": "id"})).status_code == 400
    assert api.call("PUT", f"{one}/delimiters", json=DELIMITERS).status_code == 200
    assert api.call("DELETE", one).status_code == 200


def test_every_file_map_field_is_required_and_the_answer_is_strings(
    sandbox: SandboxProcess, files: Any
) -> None:
    api = platform_for(sandbox)
    url = files.serve("/s.csv", b"id,title\nA-1,Mug\n")
    body = {**_import_body(), "url": url, "username": FILE_USER, "password": FILE_PASSWORD}
    created = api.call("POST", f"/dbs/{api.db_id}/imports", json=body).json()
    one = f"/dbs/{api.db_id}/imports/{created['id']}"
    assert api.call("PUT", f"{one}/delimiters", json=DELIMITERS).status_code == 200
    full = file_map_body({"id": "id", "title": "title"}, encode_source_file_keys="0")
    assert set(full) == set(FILE_MAP_FIELDS)

    for name in FILE_MAP_FIELDS:
        missing = api.call(
            "PUT", f"{one}/file_map", json={k: v for k, v in full.items() if k != name}
        )
        assert missing.status_code == 400, name
    answer = api.call("PUT", f"{one}/file_map", json=full)

    assert answer.status_code == 200, answer.text
    assert isinstance(answer.json()["file_map"], str)
    assert answer.json()["name_based_maps"] in ("0", "1")
    assert answer.json()["clean_file_headers"] in ("0", "1")


# -- Order API v1 (marketplace-facing) -----------------------------------------------------


def test_order_v1_endpoints(alice: Api, sandbox: SandboxProcess) -> None:
    placed = alice.put_order(order_body("IF-1", marketplace_state="PENDING"))  # place
    assert placed.status_code == 201, placed.text
    moved = alice.put_order(order_body("IF-1", marketplace_state="AWAITING_SHIPMENT"))
    assert moved.status_code == 200  # update its marketplace state
    assert [o["mp_order_number"] for o in alice.call("GET", "/orders").json()["orders"]] == ["IF-1"]
    assert alice.call("GET", "/orders/IF-1").json()["marketplace_state"] == "AWAITING_SHIPMENT"
    assert "fulfillments" in alice.call("GET", "/orders/IF-1/fulfillments").json()
    report = [{"code": "UNKNOWN_CARRIER", "message": "unknown carrier"}]
    assert alice.call("POST", "/orders/IF-1/errors", json=report).status_code == 200
    # filterable by last fulfillment update time and/or fulfillment status
    filtered = alice.call(
        "GET",
        "/orders",
        params={"seller_updated_after": "2000-01-01T00:00:00Z", "fulfillment_status": "COMPLETE"},
    )
    assert filtered.status_code == 200
    # the OAuth step for the seller (the contract's /authorize) and /access_token
    authorize = requests.get(sandbox.api_url + "/authorize", timeout=10, allow_redirects=False)
    assert authorize.status_code in (200, 400)
    assert requests.post(sandbox.api_url + "/access_token", timeout=10).status_code in (400, 401)


def test_access_tokens_last_an_hour(alice: Api, sandbox: SandboxProcess) -> None:
    response = refresh(sandbox, alice.refresh_token)
    assert response.status_code == 200
    assert response.json()["expires_in"] == 3600


# -- Order API v2 ------------------------------------------------------------------------


def test_order_v2_endpoints_and_filters(alice: Api, sandbox: SandboxProcess) -> None:
    assert alice.put_order(order_body("IF-2")).status_code == 201
    seller = seller_api(sandbox, "alice")
    sandbox.v2_import("alice")

    for params in (
        {},
        {"normalized_marketplace_state": "AWAITING_SHIPMENT"},
        {"marketplace_state_changed_after": "2000-01-01T00:00:00Z"},
        {"imported_after": "2000-01-01T00:00:00Z"},
    ):
        assert len(seller.orders(**params)) == 1, params
    assert seller.call("GET", "/orders", params={"service_status": "READY"}).status_code == 200
    (order,) = seller.orders()
    confirm = seller.call(
        "POST", f"/orders/{order['id']}/confirm", json={"merchant_order_number": "ERP-7"}
    )
    assert confirm.status_code == 200, confirm.text
    red, blue = (line["id"] for line in order["order_lines"])
    assert seller.ship(order["id"], [(red, 1)]).status_code == 201
    assert seller.cancel(order["id"], [(blue, 1)]).status_code == 201
