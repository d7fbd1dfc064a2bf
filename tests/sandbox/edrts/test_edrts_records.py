"""EDRTS records (sandbox/edrts): partial updates, clearing, creating, deleting, batches
and their jobs, applied asynchronously by the worker. Real HTTP to the sandbox."""

from __future__ import annotations

import time

from tests.sandbox.edrts.conftest import Edrts
from tests.sandbox.platform_client import USERNAME


def test_put_changes_only_the_fields_named_and_adds_new_fields(edrts: Edrts) -> None:
    before = edrts.rows()
    batches = edrts.accepted(
        edrts.put(
            [{"id": "A-1", "mp_status": "listed", "mp_reason": ""}, {"id": "A-3", "price": 8}]
        )
    )
    assert edrts.job_done(batches[0])["status"] == "processed"
    rows = edrts.rows()
    assert rows["A-1"] == {**before["A-1"], "mp_status": "listed", "mp_reason": ""}
    assert rows["A-3"] == {**before["A-3"], "price": "8"}
    assert rows["A-2"] == before["A-2"]
    db = next(d for d in edrts.sandbox.control("GET", "/dbs")["dbs"] if str(d["id"]) == edrts.db_id)
    assert db["fields"][-2:] == ["mp_status", "mp_reason"]
    assert edrts.sandbox.violations()["total"] == 0


def test_an_empty_string_clears_a_field(edrts: Edrts) -> None:
    edrts.job_done(edrts.accepted(edrts.put([{"id": "A-1", "mp_status": "listed"}]))[0])
    edrts.job_done(edrts.accepted(edrts.put([{"id": "A-1", "mp_status": "", "brand": ""}]))[0])
    row = edrts.rows()["A-1"]
    assert row["mp_status"] == ""
    assert row["brand"] == ""
    assert row["title"] == 'Mug, "Blue"'


def test_the_answer_names_the_batches_and_the_record_count(edrts: Edrts) -> None:
    edrts.sandbox.edrts_state(batch_records=2)
    records = [{"id": f"A-{i}", "mp_status": "listed"} for i in (1, 2, 3)] * 2 + [
        {"id": "A-1", "mp_status": "rejected"}
    ]
    response = edrts.put(records)
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["sku_count"] == 7
    batches = data["batches"]
    assert [b["batch_index"] for b in batches] == [0, 1, 2, 3]
    assert {b["db_id"] for b in batches} == {edrts.db_id}
    assert len({b["correlation_id"] for b in batches}) == 1
    assert set(batches[0]) == {"db_id", "correlation_id", "batch_index"}
    # The request's job (two segments) covers all its batches.
    assert edrts.job_done(batches[0])["records"] == 7
    # Each batch on its own at the older three-segment path: reading B only.
    assert edrts.batch_job(batches[0]).status_code == 404
    edrts.sandbox.readings(edrts_job_path="B")
    assert [edrts.batch_job(b).json()["records"] for b in batches] == [2, 2, 2, 1]
    # Applied in the order received: the last record of the request wins.
    assert edrts.rows()["A-1"]["mp_status"] == "rejected"


def test_batches_are_queued_then_processed_after_the_delay(edrts: Edrts) -> None:
    edrts.sandbox.edrts_state(delay_seconds=1.0)
    sent = time.monotonic()
    batch = edrts.accepted(edrts.put([{"id": "A-2", "mp_status": "listed"}]))[0]
    first = edrts.job(batch).json()
    assert first == {"status": "queued", "processed_timestamp": None, "records": 1, "errors": []}
    assert "mp_status" not in edrts.rows()["A-2"]
    assert edrts.sandbox.edrts_state()["stats"]["jobs"]["queued"] == 1
    done = edrts.job_done(batch)
    assert time.monotonic() - sent >= 0.9
    assert done["status"] == "processed"
    assert done["processed_timestamp"].endswith("+00:00")
    assert done["errors"] == []
    assert edrts.rows()["A-2"]["mp_status"] == "listed"


def test_an_unknown_id_creates_a_product_and_a_marketplace_doing_so_is_a_violation(
    edrts: Edrts,
) -> None:
    batch = edrts.accepted(edrts.put([{"id": "NEW-1", "mp_status": "listed"}]))[0]
    assert edrts.job_done(batch)["status"] == "processed"
    row = edrts.rows()["NEW-1"]
    assert row["mp_status"] == "listed"
    assert row["title"] == ""
    found = edrts.sandbox.violations()
    assert found["by_kind"]["edrts_marketplace_created_product"] == 1
    assert found["recent"][0]["seller"] == USERNAME
    assert "NEW-1" in found["recent"][0]["detail"]


def test_the_databases_owner_may_create_products(edrts: Edrts) -> None:
    assert edrts.sandbox.db_owner_set(edrts.db_id, USERNAME)["owner"] == USERNAME
    batch = edrts.accepted(edrts.put([{"id": "NEW-2", "title": "Jug"}]))[0]
    edrts.job_done(batch)
    assert edrts.rows()["NEW-2"]["title"] == "Jug"
    assert edrts.sandbox.violations()["total"] == 0


def test_delete_removes_products_and_names_unknown_ids(edrts: Edrts) -> None:
    response = edrts.delete(["A-1", "NOPE", {"id": "A-2"}])
    batch = edrts.accepted(response)[0]
    assert response.json()["data"]["sku_count"] == 3
    done = edrts.job_done(batch)
    assert done["status"] == "processed"
    assert done["records"] == 3
    assert done["errors"] == [{"id": "NOPE", "message": "No product with this id"}]
    assert set(edrts.rows()) == {"A-3"}


def test_values_must_be_strings_and_ids_present(edrts: Edrts) -> None:
    cases = [
        ({"id": "A-1", "mp_status": None}, "Record 0 (id 'A-1'): mp_status must be a string"),
        ({"mp_status": "x"}, "Record 0: id is required"),
        ({"id": "A-1", "bad name": "x"}, "Record 0 (id 'A-1'): 'bad name' is not a field name"),
        ("A-1", "Record 0: must be a JSON object"),
    ]
    for record, message in cases:
        response = edrts.put([record])
        assert response.status_code == 400, response.text
        assert response.json()["status"] == "fail"
        assert response.json()["message"].startswith(message)
    for body, message in (
        ({"id": "A-1"}, "The body must be a JSON array"),
        ([], "The body holds no records"),
    ):
        response = edrts.put(body)
        assert (response.status_code, response.json()["message"]) == (400, message)
    response = edrts.call("PUT", f"/db/{edrts.db_id}", data=b"[{not json")
    assert response.status_code == 400
    assert response.json()["message"].startswith("The body is not valid JSON")
    assert edrts.sandbox.edrts_jobs()["jobs"] == []
