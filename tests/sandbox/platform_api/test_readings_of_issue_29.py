"""The sandbox's readings of the Platform API points issue 29 added: an import read back
behind a preprocess script, a log time without a zone, and an "unset schedule" answer that
still shows a cron."""

from __future__ import annotations

import re

import pytest

from tests.sandbox.platform_api.test_export_delivery import _export, destination
from tests.sandbox.platform_api.test_platform_imports import add_import, api, put
from tests.sandbox.platform_client import PlatformApi
from tests.support.sandbox_process import SandboxProcess

__all__ = ["api", "destination"]  # fixtures used below

UNSET = {"day": "-1", "hour": "-1", "minute": "-1"}


@pytest.mark.parametrize("reading", ["A", "B"])
def test_an_import_reads_back_as_sent_or_behind_a_preprocess_script(
    api: PlatformApi, sandbox: SandboxProcess, reading: str
) -> None:
    sandbox.readings(import_file_location=reading)
    created = add_import(api, url="http://127.0.0.1:9/status.csv")
    read = api.call("GET", f"/dbs/{api.db_id}/imports/{created['id']}").json()
    listed = api.call("GET", f"/dbs/{api.db_id}/imports").json()

    for record in (created, read, *listed):
        if reading == "A":
            assert record["file_location"] == "url"
            assert record["url"] == "http://127.0.0.1:9/status.csv"
            assert "import_info" not in record
        else:
            assert record["file_location"] == "preprocess_script"
            assert "url" not in record
            assert record["import_info"]["file_location"] == "url"
            assert record["import_info"]["url"] == "http://127.0.0.1:9/status.csv"
            assert isinstance(record["preprocess_info"], dict)
            assert "password" not in record["import_info"]


@pytest.mark.parametrize(("reading", "answered"), [("A", None), ("B", "15 3 * * *")])
def test_unsetting_a_schedule_answers_null_or_the_old_cron_and_unsets_it(
    api: PlatformApi, sandbox: SandboxProcess, reading: str, answered: str | None
) -> None:
    sandbox.readings(unset_schedule_cron=reading)
    created = add_import(api)
    put(api, created["id"], "schedule", {"day": "*", "hour": "3", "minute": "15"})

    unset = put(api, created["id"], "schedule", UNSET)

    assert unset.status_code == 200
    assert unset.json() == {"cron": answered, "paused": 0}
    # Whatever the answer shows, nothing is scheduled any more.
    assert api.call("GET", f"/dbs/{api.db_id}/imports/{created['id']}").json()["cron"] is None


@pytest.mark.parametrize(
    ("reading", "form"),
    [
        ("A", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"),
        ("B", r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"),
    ],
)
def test_an_exports_log_time_has_an_offset_or_no_zone(
    api: PlatformApi, sandbox: SandboxProcess, destination: object, reading: str, form: str
) -> None:
    sandbox.readings(export_log_time=reading)
    export = _export(api, destination)  # type: ignore[arg-type]
    assert sandbox.export_run(export["id"])["status"] == "success"

    last_log = api.call("GET", f"/dbs/{api.db_id}/exports/{export['id']}").json()["last_log"]

    assert re.fullmatch(form, last_log["time"]), last_log["time"]
