"""EDRTS's control API, fault switches and page: what tests and the bench read to measure
freshness (per product and field, when EDRTS set it) and to test reconciliation."""

from __future__ import annotations

import requests

from tests.sandbox.edrts.conftest import Edrts


def test_products_show_mp_fields_with_their_source_and_times(edrts: Edrts) -> None:
    batch = edrts.accepted(
        edrts.put([{"id": "A-1", "mp_status": "listed", "mp_listing_id": "L1"}])
    )[0]
    edrts.job_done(batch)
    # The join import (or anyone else) writes A-2's status: not EDRTS's.
    edrts.sandbox.db_rows_change(edrts.db_id, rows=[{"id": "A-2", "mp_status": "rejected"}])
    answer = edrts.sandbox.edrts_products(edrts.db_id)
    assert answer["total"] == 3
    products = {p["id"]: p["fields"] for p in answer["products"]}
    listed = products["A-1"]["mp_status"]
    assert listed["value"] == "listed"
    assert listed["source"] == "edrts"
    assert listed["edrts"]["value"] == "listed"
    assert listed["edrts"]["correlation_id"] == batch["correlation_id"]
    assert listed["edrts"]["received_at"] <= listed["edrts"]["set_at"]
    assert products["A-1"]["mp_listing_id"]["source"] == "edrts"
    assert products["A-2"]["mp_status"] == {"value": "rejected", "source": "import", "edrts": None}
    assert products["A-3"]["mp_status"] == {"value": "", "source": "", "edrts": None}
    # Once something else overwrites an EDRTS value, the source says so; the stamp stays.
    edrts.sandbox.db_rows_change(edrts.db_id, rows=[{"id": "A-1", "mp_status": "inactive"}])
    one = edrts.sandbox.edrts_products(edrts.db_id, id="A-1", edrts_only=1)
    assert one["total"] == 1
    status = one["products"][0]["fields"]["mp_status"]
    assert (status["value"], status["source"], status["edrts"]["value"]) == (
        "inactive",
        "import",
        "listed",
    )


def test_jobs_and_stats(edrts: Edrts) -> None:
    batch = edrts.accepted(edrts.put([{"id": "A-1", "mp_status": "listed"}, {"id": "N-1"}]))[0]
    edrts.job_done(batch)
    edrts.job_done(edrts.accepted(edrts.delete(["A-3"]))[0])
    found = edrts.sandbox.edrts_jobs(db_id=edrts.db_id)
    assert [j["kind"] for j in found["jobs"]] == ["delete", "update"]
    update = found["jobs"][1]
    assert update["correlation_id"] == batch["correlation_id"]
    assert (update["status"], update["records"], update["created"], update["updated"]) == (
        "processed",
        2,
        1,
        1,
    )
    assert update["marketplace"] is True
    assert update["processing_seconds"] >= 0
    assert found["stats"]["jobs"] == {"queued": 0, "processed": 2, "failed": 0, "lost": 0}
    assert found["stats"]["records"] == 3
    assert found["stats"]["deleted"] == 1
    state = edrts.sandbox.edrts_state()
    assert state["base_path"] == "/catalog/rest.php"
    assert state["rate_limit"] == {"limit": 300, "window_seconds": 60.0}
    assert state["stats"]["requests"]["requests"] >= 4
    assert state["settings"]["delay_seconds"] == 0.0


def test_settings_are_checked_and_reset_restores_them(edrts: Edrts) -> None:
    bad = requests.post(edrts.sandbox.control_url + "/edrts", json={"delay_seconds": -1}, timeout=5)
    assert bad.status_code == 400
    bad = requests.post(edrts.sandbox.control_url + "/edrts", json={"speed": 1}, timeout=5)
    assert bad.status_code == 400
    edrts.sandbox.edrts_state(batch_records=7, fail_next=2)
    edrts.sandbox.reset()
    assert edrts.sandbox.edrts_state()["settings"] == {
        "delay_seconds": 0.5,
        "batch_records": 100,
        "fail_next": 0,
        "lose_next": 0,
        "unavailable_next": 0,
    }


def test_a_failed_batch_applies_nothing_and_names_its_records(edrts: Edrts) -> None:
    edrts.sandbox.edrts_state(fail_next=1)
    batch = edrts.accepted(edrts.put([{"id": "A-1", "mp_status": "listed"}, {"id": "A-2"}]))[0]
    done = edrts.job_done(batch)
    assert done["status"] == "failed"
    assert [e["id"] for e in done["errors"]] == ["A-1", "A-2"]
    assert "mp_status" not in edrts.rows()["A-1"]
    # The next batch goes through.
    edrts.job_done(edrts.accepted(edrts.put([{"id": "A-1", "mp_status": "listed"}]))[0])
    assert edrts.rows()["A-1"]["mp_status"] == "listed"


def test_a_lost_batch_applies_nothing_and_its_job_is_not_found(edrts: Edrts) -> None:
    edrts.sandbox.edrts_state(lose_next=1)
    batch = edrts.accepted(edrts.put([{"id": "A-1", "mp_status": "listed"}]))[0]
    edrts.sandbox.edrts_wait_idle()
    response = edrts.job(batch)
    assert response.status_code == 404
    assert response.json() == {"status": "fail", "message": "Job not found"}
    assert "mp_status" not in edrts.rows()["A-1"]
    assert edrts.sandbox.edrts_state()["stats"]["jobs"]["lost"] == 1


def test_the_database_page_shows_edrts_jobs_and_fields(edrts: Edrts) -> None:
    page = requests.get(edrts.sandbox.base_url + f"/sandbox/platform/dbs/{edrts.db_id}/", timeout=5)
    assert page.status_code == 200
    assert 'id="edrts"' not in page.text  # no batch yet: no section
    edrts.job_done(edrts.accepted(edrts.put([{"id": "A-1", "mp_status": "listed"}]))[0])
    edrts.sandbox.db_rows_change(edrts.db_id, rows=[{"id": "A-2", "mp_status": "rejected"}])
    page = requests.get(edrts.sandbox.base_url + f"/sandbox/platform/dbs/{edrts.db_id}/", timeout=5)
    assert 'id="edrts"' in page.text
    assert 'processed <b id="edrts-processed">1</b>' in page.text
    assert "listed" in page.text
    assert 'class="source-edrts"' in page.text
    own = requests.get(edrts.sandbox.base_url + f"/sandbox/edrts/dbs/{edrts.db_id}/", timeout=5)
    assert own.status_code == 200
    assert 'class="source-import"' in own.text
    assert "A-3" in own.text


def test_stamps_list_every_field_edrts_set_oldest_first(edrts: Edrts) -> None:
    first = edrts.accepted(edrts.put([{"id": "A-1", "mp_status": "listed", "mp_reason": ""}]))[0]
    edrts.job_done(first)
    edrts.job_done(edrts.accepted(edrts.put([{"id": "A-2", "mp_status": "rejected"}]))[0])
    stamps = edrts.sandbox.edrts_stamps()
    assert [(s["id"], s["field"], s["value"]) for s in stamps] == [
        ("A-1", "mp_status", "listed"),
        ("A-1", "mp_reason", ""),
        ("A-2", "mp_status", "rejected"),
    ]
    assert stamps[0]["correlation_id"] == first["correlation_id"]
    assert stamps[0]["db_id"] == int(edrts.db_id)
    only = edrts.sandbox.edrts_stamps(field="mp_status", since=stamps[0]["set_at"])
    assert [s["id"] for s in only] == ["A-2"]


def test_unavailable_next_answers_503_and_queues_nothing(edrts: Edrts) -> None:
    edrts.sandbox.edrts_state(unavailable_next=1)
    response = edrts.put([{"id": "A-1", "mp_status": "listed"}])
    assert response.status_code == 503
    assert response.json() == {"status": "fail", "message": "Service unavailable (sandbox fault)"}
    assert response.headers["X-Rate-Limit-Group"] == "edrts"
    assert edrts.sandbox.edrts_jobs()["jobs"] == []
    edrts.job_done(edrts.accepted(edrts.put([{"id": "A-1", "mp_status": "listed"}]))[0])
    assert edrts.sandbox.edrts_state()["stats"]["requests"]["unavailable"] == 1
    assert edrts.sandbox.violations()["total"] == 0
