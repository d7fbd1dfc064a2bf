"""EDRTS limits, errors and answers: 5 KB a record, 10 MB a request, auth (401/403/404),
the rate limit (headers, 429, requests inside a reset window) and the two answer shapes."""

from __future__ import annotations

import json
import time

import requests

from tests.sandbox.edrts.conftest import Edrts
from tests.sandbox.platform_client import EMAIL, PASSWORD, USERNAME


def _record_of(size: int, key: str = "A-1") -> dict:
    """A record whose compact JSON text is exactly ``size`` bytes in UTF-8 (é is 2 bytes)."""
    record = {"id": key, "mp_reason": ""}
    base = len(json.dumps(record, separators=(",", ":")).encode())
    record["mp_reason"] = "é" * ((size - base) // 2) + "x" * ((size - base) % 2)
    assert len(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()) == size
    return record


def test_a_record_over_5_kb_refuses_the_request_and_is_a_violation(edrts: Edrts) -> None:
    ok = _record_of(5000)
    batch = edrts.accepted(edrts.put([ok]))[0]
    edrts.job_done(batch)
    assert edrts.rows()["A-1"]["mp_reason"] == ok["mp_reason"]

    response = edrts.put([{"id": "A-2", "mp_status": "listed"}, _record_of(5001, "A-3")])
    assert response.status_code == 400
    assert response.json() == {
        "status": "fail",
        "message": "Record 1 (id 'A-3') is 5001 bytes as JSON text, over the limit of 5000 "
        "bytes a record; nothing was applied",
    }
    time.sleep(0.3)
    assert "mp_status" not in edrts.rows()["A-2"]
    assert len(edrts.sandbox.edrts_jobs()["jobs"]) == 1
    found = edrts.sandbox.violations()
    assert found["by_kind"]["edrts_record_over_5kb"] == 1
    assert found["total"] == 1


def test_a_request_over_10_mb_is_refused_413(edrts: Edrts) -> None:
    records = [_record_of(4000, f"X-{i}") for i in range(2600)]  # ~10.4 MB
    body = json.dumps(records, ensure_ascii=False).encode()
    assert len(body) > 10_000_000
    response = edrts.call(
        "PUT", f"/db/{edrts.db_id}", data=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["status"] == "fail"
    assert "over the limit of 10000000 bytes a request" in response.json()["message"]
    assert response.headers["X-Rate-Limit-Group"] == "edrts"
    # Just under: accepted (a big request, many batches).
    under = json.dumps(records[:2400], ensure_ascii=False).encode()
    assert len(under) < 10_000_000
    response = edrts.call("PUT", f"/db/{edrts.db_id}", data=under)
    assert response.status_code == 200, response.text[:300]
    assert response.json()["data"]["sku_count"] == 2400
    assert edrts.sandbox.edrts_wait_idle(timeout=30)["created"] == 2400


def test_auth_errors(edrts: Edrts) -> None:
    records = [{"id": "A-1", "mp_status": "listed"}]
    response = edrts.put(records, headers={"x-api-key": ""})
    assert response.status_code == 401
    assert response.json() == {"status": "fail", "message": "Invalid API token"}
    assert "X-Rate-Limit-Group" not in response.headers
    assert edrts.put(records, headers={"x-api-key": "nope"}).status_code == 401
    assert edrts.put(records, db_id="999999").status_code == 404
    assert edrts.put(records, db_id="abc").status_code == 404
    assert edrts.call("GET", f"/db/{edrts.db_id}/nope/0").status_code == 404
    assert edrts.call("POST", f"/db/{edrts.db_id}", json=records).status_code == 405
    other = edrts.sandbox.db_create("Other", account_name="Other Shop", rows=[{"id": "O-1"}])
    response = edrts.put(records, db_id=str(other["id"]))
    assert response.status_code == 403
    assert response.json()["status"] == "fail"
    # Another user's token cannot read this user's batches either.
    batch = edrts.accepted(edrts.put(records))[0]
    edrts.sandbox.api_user_create(
        "other", "pw", "o@x.example", account_ids=[str(other["account_id"])]
    )
    stranger = edrts.sandbox.platform_login("other", "pw", "o@x.example")
    response = edrts.call(
        "GET", f"/db/{batch['db_id']}/{batch['correlation_id']}", headers={"x-api-key": stranger}
    )
    assert response.status_code == 403
    edrts.sandbox.api_token_revoke(username=USERNAME)
    assert edrts.put(records).status_code == 401
    assert edrts.sandbox.violations()["total"] == 0


def test_rate_limit_headers_429_and_requests_inside_the_reset_window(edrts: Edrts) -> None:
    edrts.sandbox.set_rate_limit("edrts", 2)
    records = [{"id": "A-1", "mp_status": "listed"}]
    first = edrts.put(records)
    assert first.status_code == 200
    assert first.headers["X-Rate-Limit-Group"] == "edrts"
    assert first.headers["X-Rate-Limit-Remaining"] == "1"
    reset = int(first.headers["X-Rate-Limit-Reset"])
    assert time.time() + 55 < reset <= time.time() + 61
    second = edrts.job(edrts.accepted(first)[0])  # every authenticated call counts
    assert second.headers["X-Rate-Limit-Remaining"] == "0"
    assert edrts.sandbox.violations()["total"] == 0

    refused = edrts.put(records)
    assert refused.status_code == 429
    wait = reset - int(time.time())
    message = refused.json()["message"]
    assert refused.json()["status"] == "fail"
    assert message.startswith("Rate Limit Exceeded. Please wait ")
    assert message.endswith(" seconds before trying again.")
    assert abs(int(message.split()[5]) - wait) <= 1
    assert refused.headers["X-Rate-Limit-Group"] == "edrts"
    assert refused.headers["X-Rate-Limit-Remaining"] == "0"
    assert refused.headers["X-Rate-Limit-Reset"] == str(reset)
    assert edrts.sandbox.violations()["total"] == 0

    again = edrts.put(records)  # ignoring the reset time
    assert again.status_code == 429
    found = edrts.sandbox.violations()
    assert found["by_kind"]["edrts_reset_window"] == 1
    assert found["recent"][0]["seller"] == USERNAME
    stats = edrts.sandbox.edrts_state()["stats"]["requests"]
    assert stats["rate_limited"] == 2


def test_the_limit_is_per_api_user_not_per_token(edrts: Edrts) -> None:
    edrts.sandbox.set_rate_limit("edrts", 1)
    second_token = edrts.sandbox.platform_login(USERNAME, PASSWORD, EMAIL, name="second")
    assert edrts.put([{"id": "A-1", "mp_status": "x"}]).status_code == 200
    response = edrts.put([{"id": "A-1", "mp_status": "y"}], headers={"x-api-key": second_token})
    assert response.status_code == 429


def test_the_second_answer_shape_by_the_readings_switch(edrts: Edrts) -> None:
    assert edrts.sandbox.readings(edrts_answer="B")["edrts_answer"] == "B"
    edrts.sandbox.edrts_state(delay_seconds=30)
    response = edrts.put([{"id": "A-1", "mp_status": "listed"}])
    assert response.status_code == 200
    assert response.json() == {
        "status": "success",
        "data": {"requests_in_queue": 1, "last_processed_job": None},
    }
    edrts.sandbox.edrts_state(delay_seconds=0)
    edrts.sandbox.edrts_wait_idle()
    data = edrts.put([{"id": "A-2", "mp_status": "listed"}]).json()["data"]
    assert data["requests_in_queue"] == 1
    last = data["last_processed_job"]
    assert set(last) == {
        "id",
        "received_timestamp",
        "processed_timestamp",
        "processing_time",
        "details_url",
    }
    assert last["received_timestamp"] <= last["processed_timestamp"]
    assert isinstance(last["processing_time"], float)
    assert last["details_url"].startswith(edrts.sandbox.edrts_url + f"/db/{edrts.db_id}/")
    detail = requests.get(last["details_url"], headers={"x-api-key": edrts.token}, timeout=10)
    assert detail.json()["status"] == "processed"
    assert detail.json()["records"] == 1
    edrts.sandbox.reset()
    assert edrts.sandbox.readings()["edrts_answer"] == "A"
