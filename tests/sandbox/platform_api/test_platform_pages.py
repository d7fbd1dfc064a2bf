"""The sandbox's pages for the Platform API: the outbox, a database's rows (paged), an
export's runs, and a run's log and file."""

from __future__ import annotations

import requests

from tests.sandbox.platform_client import EMAIL, platform_for
from tests.support.sandbox_process import SandboxProcess


def _page(sandbox: SandboxProcess, path: str) -> str:
    response = requests.get(sandbox.base_url + path, timeout=10)
    assert response.status_code == 200, response.text
    return response.text


def test_the_outbox_page_shows_the_code(sandbox: SandboxProcess) -> None:
    platform_for(sandbox)

    html = _page(sandbox, "/sandbox/platform/outbox/")

    assert EMAIL in html
    assert sandbox.twofa_code(EMAIL) in html


def test_a_database_page_shows_its_rows_a_page_at_a_time(sandbox: SandboxProcess) -> None:
    db = sandbox.db_create("Big", account_name="Big Shop", generate=120)

    first = _page(sandbox, f"/sandbox/platform/dbs/{db['id']}/")
    third = _page(sandbox, f"/sandbox/platform/dbs/{db['id']}/?page=3")

    rows = sandbox.db_rows(db["id"], per_page=120)
    assert "Page 1 of 3" in first
    assert rows[0]["id"] in first
    assert rows[60]["id"] not in first
    assert rows[119]["id"] in third


def test_runs_their_logs_and_files_are_on_the_pages(sandbox: SandboxProcess) -> None:
    api = platform_for(sandbox)
    export = api.add_export(name="Nightly feed", threshold="9")
    failed = sandbox.export_run(export["id"])
    api.call("PUT", f"/dbs/{api.db_id}/exports/{export['id']}", json={"threshold": "0"})
    worked = sandbox.export_run(export["id"])

    overview = _page(sandbox, "/sandbox/platform/")
    export_page = _page(sandbox, f"/sandbox/platform/exports/{export['id']}/")
    run_page = _page(sandbox, f"/sandbox/platform/runs/{worked['id']}/")
    failed_page = _page(sandbox, f"/sandbox/platform/runs/{failed['id']}/")

    assert "Nightly feed" in overview
    assert f"#{worked['id']}" in export_page
    assert f"#{failed['id']}" in export_page
    assert "failed" in export_page
    assert "Export written: 3 rows" in run_page
    assert "A-3,Bowl,7.25,12,Acme" in run_page
    assert "below the threshold" in failed_page


def test_the_pages_scripts_are_served_by_name_and_nothing_else_is(sandbox: SandboxProcess) -> None:
    script = requests.get(sandbox.base_url + "/sandbox/import_log.js", timeout=10)
    unknown = requests.get(sandbox.base_url + "/sandbox/settings.js", timeout=10)

    assert script.status_code == 200
    assert script.headers["Content-Type"].startswith("text/javascript")
    assert "data-watch-import" in script.text or "watchImport" in script.text
    assert unknown.status_code == 404
