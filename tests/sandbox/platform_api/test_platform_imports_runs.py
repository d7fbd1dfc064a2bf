"""Import runs over real HTTP: the sandbox fetches the file from a server in this test
process and joins it into the database's rows. Values land in the mapped fields of the
matching rows; unmatched rows and bad lines are counted in the log; a failed fetch is retried
max_attempts times and then flags the error; the schedule fires through the ticker;
product_feed creates rows; the database page shows the joined columns and the import."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

import pytest
import requests

from tests.sandbox.conftest import csrf_token
from tests.sandbox.platform_api.test_platform_imports import (
    CATALOG_FIELDS,
    CATALOG_ROWS,
    DELIMITERS,
    STATUS_CSV,
    FileServer,
    add_import,
    file_map_body,
    hexkey,
    mapped_import,
    put,
)
from tests.sandbox.platform_client import PlatformApi, platform_for
from tests.support.sandbox_process import SandboxProcess


@pytest.fixture
def api(sandbox: SandboxProcess) -> PlatformApi:
    return platform_for(sandbox, rows=CATALOG_ROWS, fields=CATALOG_FIELDS)


@pytest.fixture
def files() -> Iterator[FileServer]:
    server = FileServer().start()
    try:
        yield server
    finally:
        server.stop()


def _rows_by_id(sandbox: SandboxProcess, db_id: str) -> dict[str, dict]:
    return {row["id"]: row for row in sandbox.db_rows(db_id, per_page=1000)}


def _wait_for(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def test_a_join_run_writes_each_column_into_its_target_field(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    created = mapped_import(api, files)

    run = sandbox.control("POST", f"/imports/{created['id']}/run")
    rows = _rows_by_id(sandbox, api.db_id)
    read_back = api.call("GET", f"/dbs/{api.db_id}/imports/{created['id']}").json()

    assert run["status"] == "success", run["message"]
    assert (run["rows"], run["matched"], run["unmatched"], run["bad_lines"]) == (2, 2, 0, 0)
    assert run["error_flag"] == 0
    assert rows["A-1"]["mp_price"] == "12.50"
    assert rows["A-1"]["mp_rating"] == "5"
    assert rows["A-1"]["mp_size"] == "42, EU"
    assert rows["A-1"]["mp_status"] == "live"
    assert rows["A-1"]["title"] == "Mug"  # other fields untouched
    assert rows["A-3"]["mp_status"] == "rejected"
    assert rows["A-3"]["mp_size"] == "M"
    assert "mp_status" not in rows["A-2"]  # no record for it: nothing guessed
    assert read_back["status"] == "success"
    assert read_back["last_log"]["error_flag"] == "0"
    assert read_back["last_log"]["import_id"] == created["id"]
    assert "2 matched" in read_back["last_log"]["message"]
    fetched = datetime.fromisoformat(read_back["last_download_time"])
    assert fetched.utcoffset() == timedelta(0)
    assert read_back["last_download_time"].endswith("+00:00")
    assert datetime.fromisoformat(read_back["last_log"]["time"]).utcoffset() == timedelta(0)


def test_unmatched_rows_and_bad_lines_are_counted_not_guessed(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    content = (
        STATUS_CSV
        + b"NOPE-9,1.00,1,S,live\n"  # no such row
        + b"A-2,4.00,3\n"  # too few fields
        + b"A-2,4.00,3,L,live,extra\n"  # too many
        + b"A-2,4\xff00,3,L,live\n"  # not UTF-8
    )
    created = mapped_import(api, files, content)

    run = sandbox.control("POST", f"/imports/{created['id']}/run")
    rows = _rows_by_id(sandbox, api.db_id)
    state = sandbox.control("GET", f"/imports/{created['id']}")

    assert run["status"] == "success", run["message"]
    assert (run["rows"], run["matched"], run["unmatched"], run["bad_lines"]) == (6, 2, 1, 3)
    assert "mp_status" not in rows["A-2"]
    assert "NOPE-9" not in rows
    last = state["logs"][0]
    assert (last["unmatched"], last["bad_lines"]) == (1, 3)
    assert "1 unmatched" in last["message"]
    assert "3 bad lines (records 5, 6, 7)" in last["message"]


def test_clean_headers_and_positions_are_honoured_by_runs(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    url = files.serve("/s.csv", "\ufeffSKU ;Statut\nA-1;live\nA-3;inactive\n".encode())
    by_name = add_import(api, url=url)
    by_position = add_import(api, url=url, name="positions")
    semicolons = {**DELIMITERS, "separator": ";"}
    for created in (by_name, by_position):
        put(api, created["id"], "delimiters", semicolons)
    named = put(
        api,
        by_name["id"],
        "file_map",
        file_map_body(
            {hexkey("SKU"): "id", hexkey("Statut"): "mp_status"},
            separator=";",
            clean_file_headers="1",
        ),
    )
    positioned = put(
        api,
        by_position["id"],
        "file_map",
        file_map_body(
            {hexkey("0"): "id", hexkey("1"): "mp_state"}, separator=";", name_based_maps="0"
        ),
    )
    assert named.status_code == 200, named.text
    assert positioned.status_code == 200, positioned.text

    first = sandbox.control("POST", f"/imports/{by_name['id']}/run")
    second = sandbox.control("POST", f"/imports/{by_position['id']}/run")
    rows = _rows_by_id(sandbox, api.db_id)

    assert first["matched"] == second["matched"] == 2
    assert rows["A-1"]["mp_status"] == rows["A-1"]["mp_state"] == "live"
    assert rows["A-3"]["mp_status"] == rows["A-3"]["mp_state"] == "inactive"


def test_a_refused_fetch_is_retried_max_attempts_times_then_flags_the_error(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    created = mapped_import(api, files, max_attempts="3", time_between_attempts="30")
    files.hits.clear()
    files.fail_with = [500, 500, 500]

    started = time.monotonic()
    run = sandbox.control("POST", f"/imports/{created['id']}/run", {"pause_seconds": 0.1})
    read_back = api.call("GET", f"/dbs/{api.db_id}/imports/{created['id']}").json()

    assert time.monotonic() - started < 10
    assert run["status"] == "failed"
    assert run["error_flag"] == 1
    assert len(files.hits) == 3
    assert read_back["status"] == "failed"
    assert read_back["last_log"]["error_flag"] == "1"
    assert "after 3 attempt(s): HTTP 500" in read_back["last_log"]["message"]
    assert "mp_status" not in _rows_by_id(sandbox, api.db_id)["A-1"]


def test_a_second_attempt_succeeds_after_one_500(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    created = mapped_import(api, files, max_attempts="2", time_between_attempts="0")
    files.fail_with = [500]

    run = sandbox.control("POST", f"/imports/{created['id']}/run")
    logs = sandbox.control("GET", f"/imports/{created['id']}")["logs"]

    assert run["status"] == "success", run["message"]
    assert "(attempt 2 of 2)" in run["message"]
    assert [log["error_flag"] for log in logs] == [False, True]


def test_wrong_credentials_401_fail_the_run(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    created = mapped_import(api, files, max_attempts="2", time_between_attempts="0")
    api.call("POST", f"/dbs/{api.db_id}/imports/{created['id']}", json={"password": "wrong"})
    files.hits.clear()

    run = sandbox.control("POST", f"/imports/{created['id']}/run")

    assert run["error_flag"] == 1
    assert run["message"].endswith("after 2 attempt(s): HTTP 401")
    assert len(files.hits) == 2


def test_a_scheduled_run_fires_through_the_ticker(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    created = mapped_import(api, files)
    put(api, created["id"], "schedule", {"day": "*", "hour": "*", "minute": "*"})
    url = f"/dbs/{api.db_id}/imports/{created['id']}"
    assert api.call("GET", url).json()["last_log"] == {}

    sandbox.shift_clock(61)

    _wait_for(lambda: api.call("GET", url).json()["status"] == "success")
    assert _rows_by_id(sandbox, api.db_id)["A-1"]["mp_status"] == "live"


def test_a_product_feed_import_creates_rows(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    url = files.serve("/feed.csv", b"sku|name|price\nN-1|Kettle|19.90\nN-2|Toaster|24.00\n")
    created = add_import(api, url=url, name="Feed", join_type="product_feed", join_key="")
    put(api, created["id"], "delimiters", {**DELIMITERS, "separator": "|"})
    maps = {"sku": "id", "name": "title", "price": "price"}
    mapped = put(
        api,
        created["id"],
        "file_map",
        file_map_body(maps, separator="|", encode_source_file_keys="0"),
    )
    assert mapped.status_code == 200, mapped.text

    run = sandbox.control("POST", f"/imports/{created['id']}/run")
    rows = _rows_by_id(sandbox, api.db_id)

    assert run["status"] == "success", run["message"]
    assert run["created"] == 2
    assert rows["N-1"]["title"] == "Kettle"
    assert rows["N-2"]["price"] == "24.00"
    assert rows["N-2"]["brand"] == ""
    assert len(rows) == 5


def test_a_10k_row_file_joins_in_seconds(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    generated = sandbox.db_create("Big", account_id=api.account_id, generate=10_000)
    lines = ["SKU,Statut"] + [f"DB{generated['id']}-{n:06d},live" for n in range(1, 10_001)]
    url = files.serve("/big.csv", ("\n".join(lines) + "\n").encode())
    db_id = str(generated["id"])
    response = api.call(
        "POST",
        f"/dbs/{db_id}/imports",
        json={
            "name": "big",
            "join_type": "join_info",
            "url": url,
            "join_key": "id",
            "username": "status-reader",
            "password": "status-secret",
        },
    )
    created = response.json()
    api.call("PUT", f"/dbs/{db_id}/imports/{created['id']}/delimiters", json=DELIMITERS)
    maps = {hexkey("SKU"): "id", hexkey("Statut"): "mp_status"}
    api.call("PUT", f"/dbs/{db_id}/imports/{created['id']}/file_map", json=file_map_body(maps))

    started = time.monotonic()
    run = sandbox.control("POST", f"/imports/{created['id']}/run")
    elapsed = time.monotonic() - started

    assert run["matched"] == 10_000, run["message"]
    assert elapsed < 8  # about a second here; bulk_update took 8 s
    assert sandbox.db_rows(db_id, page=100, per_page=100)[-1]["mp_status"] == "live"


def test_the_database_page_shows_joined_columns_and_the_import(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    created = mapped_import(api, files)
    sandbox.control("POST", f"/imports/{created['id']}/run")

    page = requests.get(f"{sandbox.base_url}/sandbox/platform/dbs/{api.db_id}/", timeout=10)

    assert page.status_code == 200
    html = page.text
    # The imported columns come first, marked as such
    for column in ("mp_price", "mp_rating", "mp_size", "mp_status"):
        assert f'<th class="mp">{column}</th>' in html
    assert html.index(">mp_status</th>") < html.index("<th>title</th>")
    assert '<td class="mp">rejected</td>' in html
    assert "Listing status" in html
    assert "Import done: 2 rows, 2 matched" in html
    overview = requests.get(f"{sandbox.base_url}/sandbox/platform/", timeout=10).text
    assert f'#{created["id"]}</span> <span class="badge">success</span>' in overview


def test_a_person_playing_the_seller_runs_an_import_from_the_database_page(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    created = mapped_import(api, files)
    db_url = f"{sandbox.base_url}/sandbox/platform/dbs/{api.db_id}/"
    with requests.Session() as browser:
        page = browser.get(db_url, timeout=10).text
        assert f"/sandbox/platform/imports/{created['id']}/run" in page

        started = browser.post(
            f"{sandbox.base_url}/sandbox/platform/imports/{created['id']}/run",
            data={"csrfmiddlewaretoken": csrf_token(page)},
            timeout=10,
        )

        assert started.status_code == 200  # back on the database page
        assert f"import {created['id']} started" in started.text
    deadline = time.monotonic() + 15
    while "Import done: 2 rows, 2 matched" not in requests.get(db_url, timeout=10).text:
        assert time.monotonic() < deadline, "the import run never finished"
        time.sleep(0.2)


def test_a_join_key_other_than_id_matches_on_that_field(
    api: PlatformApi, files: FileServer, sandbox: SandboxProcess
) -> None:
    url = files.serve("/by-title.csv", b"Titre,Statut\nBowl,inactive\nCup,live\n")
    created = add_import(api, url=url, join_key="title")
    put(api, created["id"], "delimiters", DELIMITERS)
    maps = {hexkey("Titre"): "title", hexkey("Statut"): "mp_status"}
    assert put(api, created["id"], "file_map", file_map_body(maps)).status_code == 200

    run = sandbox.control("POST", f"/imports/{created['id']}/run")
    rows = _rows_by_id(sandbox, api.db_id)

    assert (run["matched"], run["unmatched"]) == (1, 1), run["message"]
    assert rows["A-3"]["mp_status"] == "inactive"
    assert "mp_status" not in rows["A-1"]
