"""The Platform API's exports over real HTTP: the full Export object round trip (every value
a string, password included), closed lists, schedule → cron and scheduled runs, runs
with their last_log, rate limits with their headers, fault switches."""

from __future__ import annotations

import time

import pytest

from tests.sandbox.platform_client import PlatformApi, platform_for
from tests.support.sandbox_process import SandboxProcess

EXPORT_KEYS = {
    "id", "db_id", "name", "file_name", "protocol", "protocol_info", "host", "username",
    "password", "ftp_url", "cron", "next_run_time", "export_selector", "running", "cxn_id",
    "export_format", "file_header", "file_footer", "threshold", "include_column_names",
    "json_minify_type", "export_encoding", "delimiter", "compression", "quoted_fields",
    "deduplicate_field_name", "timestamp", "enclosure", "escape", "strip_characters",
    "show_empty_tags", "show_empty_parent_tags", "xml_write_document_tag", "use_cdata",
    "zip_inner_file_name", "max_attempts", "time_between_attempts", "timeout", "row_limit",
    "row_sort", "row_order", "legacy_workers", "worker_pid", "worker_hostname", "blocked",
    "export_index_field", "destination", "destination_region", "created_at", "export_fields",
    "status", "last_log",
}  # fmt: skip
NON_STRING = {"protocol_info", "deduplicate_field_name", "strip_characters", "export_fields"}
NULLABLE = {"cron", "next_run_time", "worker_pid", "worker_hostname", "last_log"}

ASKED = {
    "name": "Marketplace feed",
    "file_name": "feed.csv.gz",
    "protocol": "https",
    "host": "https://mp.example/catalog/feeds/k1/",
    "username": "feed-k1",
    "password": "s3cret",
    "export_format": "delimited",
    "delimiter": "comma",
    "include_column_names": 1,
    "quoted_fields": "1",
    "enclosure": '"',
    "escape": '"',
    "export_encoding": "UTF-8",
    "compression": "gzip",
    "max_attempts": 4,
    "time_between_attempts": "30",
    "timeout": "20",
    "row_limit": 0,
    "threshold": "1",
    "strip_characters": {"char1": "\\n"},
    "export_fields": [
        {"field_name": "id", "export_field_name": "sku"},
        {"field_name": "title", "export_field_name": "title"},
        {"field_name": "price", "export_field_name": "price"},
        {"field_name": "quantity", "export_field_name": "quantity"},
    ],
    "tags": ["marketplace"],  # request-only: accepted, not answered
}


@pytest.fixture
def api(sandbox: SandboxProcess) -> PlatformApi:
    return platform_for(sandbox)


def _assert_strings(export: dict) -> None:
    assert set(export) == EXPORT_KEYS
    for key, value in export.items():
        if key in NON_STRING:
            continue
        if value is None:
            assert key in NULLABLE, key
        elif key == "last_log":
            assert all(isinstance(v, str) for v in value.values())
        else:
            assert isinstance(value, str), (key, value)
    for field in export["export_fields"].values():
        assert all(isinstance(v, str) for v in field.values())


def test_an_added_export_reads_back_exactly_as_asked(api: PlatformApi) -> None:
    added = api.call("POST", f"/dbs/{api.db_id}/exports", json=ASKED)
    assert added.status_code == 200, added.text
    export_id = added.json()["id"]

    got = api.call("GET", f"/dbs/{api.db_id}/exports/{export_id}").json()

    _assert_strings(got)
    assert got == added.json()
    assert got["db_id"] == api.db_id
    for key in ("name", "file_name", "protocol", "host", "username", "password", "compression"):
        assert got[key] == ASKED[key]
    assert got["include_column_names"] == "1"
    assert got["max_attempts"] == "4"
    assert got["row_limit"] == "0"
    assert got["strip_characters"] == {"char1": "\\n"}
    assert [
        (f["field_name"], f["export_field_name"], f["sort_order"])
        for f in got["export_fields"].values()
    ] == [("id", "sku", "1"), ("title", "title", "2"), ("price", "price", "3"),
          ("quantity", "quantity", "4")]  # fmt: skip
    assert list(got["export_fields"]) == ["field1", "field2", "field3", "field4"]
    assert got["status"] == "new"
    assert got["last_log"] is None
    listed = api.call("GET", f"/dbs/{api.db_id}/exports").json()
    assert [e["id"] for e in listed] == [export_id]


def test_update_merges_and_answers_the_whole_export(api: PlatformApi) -> None:
    export = api.add_export(**ASKED)

    updated = api.call(
        "PUT",
        f"/dbs/{api.db_id}/exports/{export['id']}",
        json={
            "delimiter": "semicolon",
            "password": "n3w",
            "export_fields": {
                "field2": {"field_name": "price", "export_field_name": "price", "sort_order": "2"},
                "field1": {"field_name": "id", "export_field_name": "sku", "sort_order": "1"},
            },
        },
    )

    assert updated.status_code == 200
    body = updated.json()
    _assert_strings(body)
    assert body["delimiter"] == "semicolon"
    assert body["password"] == "n3w"
    assert body["host"] == ASKED["host"]  # untouched settings stay
    assert [f["export_field_name"] for f in body["export_fields"].values()] == ["sku", "price"]
    assert api.call("GET", f"/dbs/{api.db_id}/exports/{export['id']}").json() == body


def test_delete_answers_an_empty_object_and_the_export_is_gone(api: PlatformApi) -> None:
    export = api.add_export()

    deleted = api.call("DELETE", f"/dbs/{api.db_id}/exports/{export['id']}")

    assert deleted.status_code == 200
    assert deleted.json() == {}
    assert api.call("GET", f"/dbs/{api.db_id}/exports/{export['id']}").status_code == 404


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("export_format", "csv"),
        ("delimiter", "colon"),
        ("compression", "bzip2"),
        ("json_minify_type", "tiny"),
        ("row_order", "UP"),
        ("protocol", "ftp"),
        ("export_encoding", "UTF-7"),
        ("destination", "moon"),
        ("include_column_names", "yes"),
        ("max_attempts", "0"),
        ("row_limit", "-1"),
        ("timeout", "soon"),
        ("enclosure", "<<"),
        ("row_sort", "colour"),
        ("deduplicate_field_name", ["colour"]),
        ("export_selector", "colour = red"),
        ("strip_characters", {"char1": "ab"}),
    ],
)
def test_unknown_values_are_refused_naming_the_field(
    api: PlatformApi, field: str, value: object
) -> None:
    response = api.call("POST", f"/dbs/{api.db_id}/exports", json={"name": "x", field: value})

    assert response.status_code == 400
    assert response.json()["status"] == "fail"
    assert response.json()["message"].startswith(field)
    assert api.call("GET", f"/dbs/{api.db_id}/exports").json() == []


def test_export_fields_must_name_fields_of_the_database(api: PlatformApi) -> None:
    response = api.call(
        "POST",
        f"/dbs/{api.db_id}/exports",
        json={"name": "x", "export_fields": [{"field_name": "colour", "export_field_name": "c"}]},
    )

    assert response.status_code == 400
    assert response.json()["message"].startswith("export_fields")


def test_schedule_becomes_cron_and_can_pause_and_unset(api: PlatformApi) -> None:
    export = api.add_export()
    url = f"/dbs/{api.db_id}/exports/{export['id']}/schedule"

    set_ = api.call("PUT", url, json={"day": "1", "hour": "6", "minute": "30"})
    scheduled = api.call("GET", f"/dbs/{api.db_id}/exports/{export['id']}").json()
    paused = api.call("PUT", url, json={"paused": "1"})
    paused_export = api.call("GET", f"/dbs/{api.db_id}/exports/{export['id']}").json()
    unset = api.call("PUT", url, json={"day": "-1", "hour": "-1", "minute": "-1", "paused": 0})
    bad = api.call("PUT", url, json={"day": "7", "hour": "6", "minute": "30"})

    assert set_.status_code == 200
    assert set_.json() == {"cron": "30 6 * * 1", "paused": 0}
    assert scheduled["cron"] == "30 6 * * 1"
    assert scheduled["next_run_time"].endswith("T06:30:00+00:00")
    assert paused.json() == {"cron": "30 6 * * 1", "paused": 1}
    assert paused_export["next_run_time"] is None
    assert unset.json() == {"cron": None, "paused": 0}
    assert bad.status_code == 400
    assert bad.json()["message"].startswith("day")


def _wait_for(condition: callable, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def test_a_scheduled_run_fires_when_its_time_comes(
    api: PlatformApi, sandbox: SandboxProcess
) -> None:
    export = api.add_export()
    api.call(
        "PUT",
        f"/dbs/{api.db_id}/exports/{export['id']}/schedule",
        json={"day": "*", "hour": "*", "minute": "*"},
    )
    assert sandbox.export_state(export["id"])["runs"] == []

    sandbox.shift_clock(61)

    _wait_for(lambda: sandbox.export_state(export["id"])["runs"])
    run = sandbox.export_state(export["id"])["runs"][0]
    assert run["trigger"] == "schedule"
    _wait_for(lambda: sandbox.export_state(export["id"])["export"]["status"] == "success")


def test_run_answers_202_and_the_outcome_shows_in_status_and_last_log(api: PlatformApi) -> None:
    export = api.add_export()
    url = f"/dbs/{api.db_id}/exports/{export['id']}"

    started = api.call("POST", url + "/run")

    assert started.status_code == 202
    assert started.json()["status"] == "success"
    _wait_for(lambda: api.call("GET", url).json()["status"] == "success")
    done = api.call("GET", url).json()
    assert done["running"] == "0"
    assert set(done["last_log"]) == {"id", "export_id", "message", "time", "error_flag"}
    assert done["last_log"]["export_id"] == export["id"]
    assert done["last_log"]["error_flag"] == "0"
    assert "3 rows" in done["last_log"]["message"]
    dbs = api.call("GET", f"/accounts/{api.account_id}/dbs").json()
    assert dbs[0]["export_status"] == "success"


def test_every_authenticated_answer_carries_rate_limit_headers(api: PlatformApi) -> None:
    for response in (
        api.call("GET", f"/dbs/{api.db_id}/exports"),
        api.call("GET", f"/dbs/{api.db_id}/exports/999"),
        api.call("POST", f"/dbs/{api.db_id}/exports", json={"delimiter": "x"}),
        api.call("GET", "/user/accounts"),
    ):
        assert response.headers["X-Rate-Limit-Group"] in ("exports", "accounts")
        assert response.headers["X-Rate-Limit-Remaining"].isdigit()
        assert int(response.headers["X-Rate-Limit-Reset"]) > time.time() - 1


def test_over_the_limit_is_a_429_with_the_contracts_message_and_headers(
    api: PlatformApi, sandbox: SandboxProcess
) -> None:
    sandbox.set_rate_limit("exports", 2, window_seconds=30)
    url = f"/dbs/{api.db_id}/exports"

    first, second, third = (api.call("GET", url) for _ in range(3))
    other_group = api.call("GET", "/user/accounts")

    assert [first.status_code, second.status_code, third.status_code] == [200, 200, 429]
    assert first.headers["X-Rate-Limit-Remaining"] == "1"
    assert third.headers["X-Rate-Limit-Group"] == "exports"
    assert third.headers["X-Rate-Limit-Remaining"] == "0"
    wait = int(third.headers["Retry-After"])
    assert 1 <= wait <= 30
    assert third.json() == {
        "status": "fail",
        "message": f"Rate Limit Exceeded. Please wait {wait} seconds before trying again.",
    }
    assert other_group.status_code == 200


def test_calling_again_before_the_wait_is_over_counts_as_an_early_retry(
    api: PlatformApi, sandbox: SandboxProcess
) -> None:
    sandbox.set_rate_limit("exports", 1, window_seconds=30)
    url = f"/dbs/{api.db_id}/exports"
    api.call("GET", url)
    assert api.call("GET", url).status_code == 429
    assert sandbox.violations()["total"] == 0

    time.sleep(0.2)  # past the in-flight grace: this one was sent after reading the 429
    api.call("GET", url)

    found = sandbox.violations()
    assert found["by_kind"]["early_retry"] == 1
    assert found["recent"][0]["client_id"] == "api-token:tests"


def test_a_fault_switch_on_an_export_endpoint(api: PlatformApi, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="add_export", kind="500", count=1)

    failed = api.call("POST", f"/dbs/{api.db_id}/exports", json={"name": "x"})
    worked = api.call("POST", f"/dbs/{api.db_id}/exports", json={"name": "x"})

    assert failed.status_code == 500
    assert failed.json()["status"] == "fail"
    assert worked.status_code == 200
    assert len(api.call("GET", f"/dbs/{api.db_id}/exports").json()) == 1
    logged = sandbox.requests_log(endpoint="add_export")
    assert [e["fault"] for e in logged] == ["server_error", None]


def test_the_platform_wildcard_answers_429_in_the_apis_shape(
    api: PlatformApi, sandbox: SandboxProcess
) -> None:
    sandbox.set_faults(endpoint="*", kind="500")  # the order API's wildcard
    sandbox.set_faults(endpoint="platform", kind="429", retry_after=3, count=1)

    limited = api.call("GET", "/user/accounts")
    after = api.call("GET", "/user/accounts")

    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "3"
    assert limited.headers["X-Rate-Limit-Group"] == "accounts"
    assert limited.json() == {
        "status": "fail",
        "message": "Rate Limit Exceeded. Please wait 3 seconds before trying again.",
    }
    assert after.status_code == 200
