"""The Content API (sandbox/content_api): a database's rows read back by API token, paged
and filtered by the one selector reading; what it refuses is counted. Real HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sandbox.platform_client import SMALL_ROWS, PlatformApi, platform_for
from tests.support.sandbox_process import SandboxProcess


@pytest.fixture
def api(sandbox: SandboxProcess) -> Iterator[PlatformApi]:
    api = platform_for(sandbox)
    yield api
    api.http.close()


def test_raw_data_answers_every_row_with_its_id_and_the_total(api: PlatformApi) -> None:
    response = api.call("GET", f"/dbs/{api.db_id}/raw_data")
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["status"], body["total_count"]) == ("success", 3)
    assert body["data"] == SMALL_ROWS
    assert response.headers["X-Rate-Limit-Group"] == "content"
    same = api.call("GET", f"/dbs/{api.db_id}/transformed_data").json()
    assert same["data"] == SMALL_ROWS
    assert api.sandbox.violations()["total"] == 0


def test_a_selector_of_ids_pages_by_limit_and_offset(api: PlatformApi) -> None:
    selector = '[id] equal "A-3" OR [id] equal "A-1" OR [id] equal "A-9"'
    first = api.call(
        "GET", f"/dbs/{api.db_id}/raw_data", params={"selector": selector, "limit": "1"}
    ).json()
    assert (first["total_count"], [r["id"] for r in first["data"]]) == (2, ["A-1"])
    second = api.call(
        "GET",
        f"/dbs/{api.db_id}/raw_data",
        params={"selector": selector, "limit": "1", "offset": "1"},
    ).json()
    assert [r["id"] for r in second["data"]] == ["A-3"]
    backwards = api.call(
        "GET", f"/dbs/{api.db_id}/raw_data", params={"selector": selector, "direction": "<"}
    ).json()
    assert [r["id"] for r in backwards["data"]] == ["A-3", "A-1"]
    quoted = api.call(
        "GET",
        f"/dbs/{api.db_id}/raw_data",
        params={"selector": r'[title] equal "Mug, \"Blue\""'},
    ).json()
    assert [r["id"] for r in quoted["data"]] == ["A-1"]
    assert api.sandbox.violations()["total"] == 0


@pytest.mark.parametrize(
    "params",
    [
        {"selector": "id = 'A-1'"},
        {"selector": '[id] equal "A-1" AND [id] equal "A-2"'},
        {"limit": "0"},
        {"limit": "1001"},
        {"offset": "-1"},
        {"direction": "asc"},
    ],
)
def test_a_query_outside_the_reading_is_refused_and_counted(
    api: PlatformApi, params: dict[str, str]
) -> None:
    response = api.call("GET", f"/dbs/{api.db_id}/raw_data", params=params)
    assert response.status_code == 400, response.text
    assert response.json()["status"] == "fail"
    assert api.sandbox.violations()["by_kind"]["content_query"] == 1


def test_auth_and_reach_as_the_platform_api(api: PlatformApi) -> None:
    path = f"/dbs/{api.db_id}/raw_data"
    assert (
        api.call(
            "GET", path, headers={"x-api-key": "nope", "Authorization": "Bearer nope"}
        ).status_code
        == 401
    )
    assert api.call("GET", "/dbs/999999/raw_data").status_code == 404
    assert api.call("GET", path, params={"page": "2"}).status_code == 400
    assert api.call("POST", path).status_code == 405
