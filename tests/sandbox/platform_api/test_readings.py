"""The seven points where the documents are silent, each under both readings over real HTTP:
reading A by default, B switched per point by ``POST /sandbox/api/readings``
(``SandboxProcess.readings``), every point back to A on reset."""

from __future__ import annotations

import json

import pytest
import requests

from tests.sandbox.platform_api.test_export_delivery import Destination, destination
from tests.sandbox.platform_api.test_platform_imports import (
    DELIMITERS,
    STATUS_CSV,
    STATUS_MAPS,
    FileServer,
    add_import,
    api,
    file_map_body,
    files,
    hexkey,
    put,
)
from tests.sandbox.platform_client import PlatformApi
from tests.support.sandbox_process import SandboxError, SandboxProcess

__all__ = ["api", "destination", "files"]  # fixtures used below

POINTS = {
    "import_cron",
    "schedule_hour",
    "file_map_keys",
    "clean_file_headers",
    "export_delivery_url",
    "schedule_paused",
    "accounts",
    "edrts_answer",
    "complete_answer",
    "refund_notes_empty",
    # After-sale (returns and refunds).
    "return_refusal",
    "return_order_number",
    "v2_refunds_key",
}
# Issue 29's points (their own block in switches.py).
POINTS |= {
    "date_format",
    "next_cursor_last",
    "import_file_location",
    "export_log_time",
    "unset_schedule_cron",
    "edrts_job_path",
}
# The listings by mp_order_numbers (issue 34).
POINTS |= {"order_numbers_cap", "unknown_order_numbers"}
# A spent refresh token presented again (the OAuth part).
POINTS |= {"refresh_reuse"}
DECODED_MAPS = {
    "SKU": "id",
    "Prix €": "mp_price",
    "Note 👍": "mp_rating",
    "Taille, pointure": "mp_size",
    "Statut de l'annonce": "mp_status",
}


# -- the switch itself --------------------------------------------------------------------


def test_every_point_reads_a_by_default_and_switches_alone(sandbox: SandboxProcess) -> None:
    assert sandbox.readings() == dict.fromkeys(POINTS, "A")

    after = sandbox.readings(import_cron="B")

    assert after == {**dict.fromkeys(POINTS, "A"), "import_cron": "B"}
    assert sandbox.state()["readings"] == after
    page = requests.get(sandbox.base_url + "/sandbox/", timeout=10).text
    assert "import_cron B, schedule_hour A" in page


def test_all_then_single_points_and_reset_puts_all_back_to_a(sandbox: SandboxProcess) -> None:
    assert sandbox.readings_all("B") == dict.fromkeys(POINTS, "B")
    mixed = sandbox.control("POST", "/readings", {"all": "B", "accounts": "A"})["readings"]
    assert mixed == {**dict.fromkeys(POINTS, "B"), "accounts": "A"}

    sandbox.reset()

    assert sandbox.readings() == dict.fromkeys(POINTS, "A")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"import_cron": "B", "cron": "B"}, "unknown point 'cron'"),
        ({"import_cron": "B", "accounts": "b"}, 'accounts: the reading must be "A" or "B"'),
        ({"all": 2}, 'all: the reading must be "A" or "B"'),
    ],
)
def test_a_bad_point_or_reading_is_refused_and_changes_nothing(
    sandbox: SandboxProcess, body: dict, message: str
) -> None:
    response = requests.post(sandbox.control_url + "/readings", json=body, timeout=10)

    assert response.status_code == 400
    assert message in response.json()["message"]
    assert sandbox.readings() == dict.fromkeys(POINTS, "A")


# -- import_cron ----------------------------------------------------------------------------


@pytest.mark.parametrize("reading", ["A", "B"])
def test_import_record_holds_cron_only_under_a(
    api: PlatformApi, sandbox: SandboxProcess, reading: str
) -> None:
    sandbox.readings(import_cron=reading)
    created = add_import(api)

    schedule = put(api, created["id"], "schedule", {"day": "*", "hour": "3", "minute": "15"})
    one = api.call("GET", f"/dbs/{api.db_id}/imports/{created['id']}").json()
    listed = api.call("GET", f"/dbs/{api.db_id}/imports").json()

    assert schedule.status_code == 200
    assert schedule.json()["cron"] == "15 3 * * *"  # the schedule's answer says it either way
    if reading == "A":
        assert created["cron"] is None
        assert one["cron"] == "15 3 * * *"
        assert listed[0]["cron"] == "15 3 * * *"
    else:
        assert "cron" not in created
        assert "cron" not in one
        assert "cron" not in listed[0]
        assert one["paused"] == "0"  # the rest of the record is unchanged


# -- schedule_hour --------------------------------------------------------------------------


def _export_and_import(api: PlatformApi) -> list[str]:
    export = api.add_export()
    created = add_import(api)
    return [
        f"/dbs/{api.db_id}/exports/{export['id']}/schedule",
        f"/dbs/{api.db_id}/imports/{created['id']}/schedule",
    ]


@pytest.mark.parametrize("reading", ["A", "B"])
def test_schedule_hour_star_is_accepted_only_under_a(
    api: PlatformApi, sandbox: SandboxProcess, reading: str
) -> None:
    sandbox.readings(schedule_hour=reading)

    for path in _export_and_import(api):
        hourly = api.call("PUT", path, json={"day": "*", "hour": "*", "minute": "5"})
        daily = api.call("PUT", path, json={"day": "*", "hour": "3", "minute": "*"})
        if reading == "A":
            assert hourly.status_code == 200, hourly.text
            assert hourly.json()["cron"] == "5 * * * *"
        else:
            assert hourly.status_code == 400
            assert hourly.json() == {
                "status": "fail",
                "message": "hour: must be a number from 0 to 23",
            }
        assert daily.status_code == 200, daily.text  # day and minute take * in both
        assert daily.json()["cron"] == "* 3 * * *"


# -- schedule_paused ------------------------------------------------------------------------


@pytest.mark.parametrize(("reading", "running", "paused"), [("A", 0, 1), ("B", "0", "1")])
def test_paused_in_a_schedule_answer_is_a_number_under_a_and_a_string_under_b(
    api: PlatformApi, sandbox: SandboxProcess, reading: str, running: object, paused: object
) -> None:
    sandbox.readings(schedule_paused=reading)

    for path in _export_and_import(api):
        on = api.call("PUT", path, json={"day": "1", "hour": "2", "minute": "3"})
        off = api.call("PUT", path, json={"paused": "1"})

        assert on.json() == {"cron": "3 2 * * 1", "paused": running}
        assert off.json() == {"cron": "3 2 * * 1", "paused": paused}


# -- file_map_keys --------------------------------------------------------------------------


@pytest.mark.parametrize("reading", ["A", "B"])
def test_file_map_maps_read_back_decoded_under_a_and_as_sent_under_b(
    api: PlatformApi, sandbox: SandboxProcess, files: FileServer, reading: str
) -> None:
    sandbox.readings(file_map_keys=reading)
    created = add_import(api, url=files.serve("/s.csv", STATUS_CSV))
    put(api, created["id"], "delimiters", DELIMITERS)

    answer = put(api, created["id"], "file_map", file_map_body(STATUS_MAPS))
    read_back = api.call("GET", f"/dbs/{api.db_id}/imports/{created['id']}").json()
    run = sandbox.control("POST", f"/imports/{created['id']}/run")

    assert answer.status_code == 200, answer.text
    expected = DECODED_MAPS if reading == "A" else STATUS_MAPS
    assert json.loads(answer.json()["file_map"])["maps"] == expected
    assert read_back["file_map"]["maps"] == expected
    assert run["status"] == "success", run  # the run reads the columns either way
    assert run["matched"] == 2


def test_plain_keys_read_back_the_same_under_both_readings(
    api: PlatformApi, sandbox: SandboxProcess, files: FileServer
) -> None:
    created = add_import(api, url=files.serve("/s.csv", STATUS_CSV))
    put(api, created["id"], "delimiters", DELIMITERS)
    maps = {"SKU": "id", "Statut de l'annonce": "mp_status"}
    put(api, created["id"], "file_map", file_map_body(maps, encode_source_file_keys="0"))
    url = f"/dbs/{api.db_id}/imports/{created['id']}"

    under_a = api.call("GET", url).json()["file_map"]["maps"]
    sandbox.readings(file_map_keys="B")
    under_b = api.call("GET", url).json()["file_map"]["maps"]

    assert under_a == under_b == maps


# -- clean_file_headers ---------------------------------------------------------------------

MESSY_HEADER_CSV = "\ufeff Item ID ,  Statut de l'annonce\nA-1,live\nA-3,rejected\n".encode()


@pytest.mark.parametrize("reading", ["A", "B"])
def test_clean_file_headers_trims_under_a_and_also_normalises_under_b(
    api: PlatformApi, sandbox: SandboxProcess, files: FileServer, reading: str
) -> None:
    sandbox.readings(clean_file_headers=reading)
    created = add_import(api, url=files.serve("/s.csv", MESSY_HEADER_CSV))
    put(api, created["id"], "delimiters", DELIMITERS)
    as_written = {hexkey("Item ID"): "id", hexkey("Statut de l'annonce"): "mp_status"}
    normalised = {hexkey("item_id"): "id", hexkey("statut_de_l_annonce"): "mp_status"}

    written = put(api, created["id"], "file_map", file_map_body(as_written, clean_file_headers="1"))
    if reading == "A":
        assert written.status_code == 200, written.text
    else:
        assert written.status_code == 400
        assert written.json()["message"].startswith('maps: column "Item ID"')
        lowered = put(
            api, created["id"], "file_map", file_map_body(normalised, clean_file_headers="1")
        )
        assert lowered.status_code == 200, lowered.text
    run = sandbox.control("POST", f"/imports/{created['id']}/run")

    assert run["status"] == "success", run
    assert run["matched"] == 2
    rows = {row["id"]: row for row in sandbox.db_rows(api.db_id)}
    assert rows["A-3"]["mp_status"] == "rejected"


def test_clean_file_headers_0_matches_exactly_under_b_too(
    api: PlatformApi, sandbox: SandboxProcess, files: FileServer
) -> None:
    sandbox.readings(clean_file_headers="B")
    created = add_import(api, url=files.serve("/s.csv", b"Item ID,Statut\nA-1,live\n"))
    put(api, created["id"], "delimiters", DELIMITERS)

    exact = put(
        api,
        created["id"],
        "file_map",
        file_map_body({hexkey("Item ID"): "id", hexkey("Statut"): "mp_status"}),
    )

    assert exact.status_code == 200, exact.text


# -- export_delivery_url --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reading", "host", "path"),
    [
        ("A", "/catalog/feeds/k1/", "/catalog/feeds/k1/feed.csv"),
        ("B", "/catalog/feeds/k1/upload.csv", "/catalog/feeds/k1/upload.csv"),
    ],
)
def test_delivery_goes_to_host_plus_file_name_under_a_and_to_host_under_b(
    api: PlatformApi,
    sandbox: SandboxProcess,
    destination: Destination,
    reading: str,
    host: str,
    path: str,
) -> None:
    sandbox.readings(export_delivery_url=reading)
    base = f"http://127.0.0.1:{destination.port}"
    export = api.add_export(protocol="http", host=base + host, file_name="feed.csv")

    run = sandbox.export_run(export["id"])

    assert run["status"] == "success", run
    assert [put.path for put in destination.received] == [path]
    assert run["delivered_to"] == base + path
    last_log = api.call("GET", f"/dbs/{api.db_id}/exports/{export['id']}").json()["last_log"]
    assert f"to {base + path} " in last_log["message"]


def test_under_b_a_host_without_a_file_name_is_delivered(
    api: PlatformApi, sandbox: SandboxProcess, destination: Destination
) -> None:
    url = f"http://127.0.0.1:{destination.port}/in/feed.csv"
    nameless = api.add_export(protocol="http", host=url, file_name="")

    under_a = sandbox.export_run(nameless["id"])
    sandbox.readings(export_delivery_url="B")
    under_b = sandbox.export_run(nameless["id"])

    assert under_a["status"] == "failed"
    assert under_a["logs"][-1]["message"] == "Export failed: host and file_name needed"
    assert under_b["status"] == "success", under_b
    assert [put.path for put in destination.received] == ["/in/feed.csv"]


# -- accounts -------------------------------------------------------------------------------


@pytest.mark.parametrize("reading", ["A", "B"])
def test_accounts_both_calls_under_a_only_the_paginated_one_under_b(
    api: PlatformApi, sandbox: SandboxProcess, reading: str
) -> None:
    sandbox.readings(accounts=reading)

    deprecated = api.call("GET", "/user/accounts")
    anonymous = requests.get(sandbox.platform_url + "/user/accounts", timeout=10)
    paginated = api.call("GET", "/user/list-accounts", params={"page": 1, "results_per_page": 10})

    if reading == "A":
        assert deprecated.status_code == 200
        assert deprecated.json() == [{"id": api.account_id, "account_name": "Small Shop"}]
        assert anonymous.status_code == 401
    else:
        for gone in (deprecated, anonymous):
            assert gone.status_code == 404
            assert gone.json()["status"] == "fail"
            assert "/user/list-accounts" in gone.json()["message"]
    assert paginated.status_code == 200
    assert paginated.json() == {
        "accounts": [{"id": api.account_id, "account_name": "Small Shop"}],
        "pagination": {
            "page": "1",
            "results_per_page": "10",
            "total_results": "1",
            "total_pages": "1",
        },
    }


@pytest.mark.parametrize("reading", ["A", "B"])
@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("page=1&per_page=10", "per_page"),
        ("page=1&page=2", "page"),
        ("results_per_page=101", "results_per_page"),
        ("page=0", "page"),
    ],
)
def test_list_accounts_reads_its_query_strictly_under_both_readings(
    api: PlatformApi, sandbox: SandboxProcess, reading: str, query: str, named: str
) -> None:
    sandbox.readings(accounts=reading)

    response = api.call("GET", "/user/list-accounts?" + query)

    assert response.status_code == 400
    assert response.json()["status"] == "fail"
    assert named in response.json()["message"]


def test_an_unknown_reading_point_is_a_sandbox_error_for_the_helper(
    sandbox: SandboxProcess,
) -> None:
    with pytest.raises(SandboxError, match="unknown point"):
        sandbox.readings(import_crons="B")
