"""The EDRTS client: both shapes of a success answer, the size limits checked before
sending, its own base URL and its own embargo holder (the group ``edrts``)."""

from __future__ import annotations

from typing import Any

import pytest

from marketplace.platform.edrts import (
    EdrtsClient,
    accepted_from_answer,
    record_bytes,
)
from marketplace.platform.errors import PlatformMalformedResponse
from marketplace.platform.transport import ApiKeyTransport


class RecordingTransport(ApiKeyTransport):
    def __init__(self, answer: Any) -> None:
        super().__init__(base_url="http://edrts.test/catalog/rest.php", api_user="u", group="edrts")
        self.answer = answer
        self.calls: list[tuple[str, str, Any]] = []

    def request(self, method: str, path: str, *, json_body: Any = None, **_: Any) -> Any:
        self.calls.append((method, path, json_body))
        return self.answer


def test_the_first_answer_shape_names_the_batches() -> None:
    accepted = accepted_from_answer(
        {
            "status": "success",
            "data": {
                "sku_count": 2,
                "batches": [{"db_id": "7", "correlation_id": "abc", "batch_index": 0}],
            },
        }
    )
    assert accepted.sku_count == 2
    assert [(b.db_id, b.correlation_id, b.batch_index) for b in accepted.batches] == [
        ("7", "abc", "0")
    ]


def test_the_second_answer_shape_is_accepted_without_a_correlation_id() -> None:
    accepted = accepted_from_answer(
        {
            "status": "success",
            "data": {
                "requests_in_queue": "3",
                "last_processed_job": {"id": "9", "details_url": "http://x/db/7/c/0"},
            },
        }
    )
    assert accepted.batches == ()
    assert accepted.requests_in_queue == 3
    assert accepted.last_processed_job["id"] == "9"


@pytest.mark.parametrize("answer", [{}, [], {"status": "fail"}, "ok"])
def test_an_answer_without_success_is_malformed(answer: Any) -> None:
    with pytest.raises(PlatformMalformedResponse):
        accepted_from_answer(answer)


def test_records_go_as_one_array_to_the_databases_path() -> None:
    transport = RecordingTransport({"status": "success", "data": {"sku_count": 1, "batches": []}})
    client = EdrtsClient(transport)

    client.put_records(db_id="7/x", records=[{"id": "A", "mp_status": "live"}])

    assert transport.calls == [("PUT", "/db/7%2Fx", [{"id": "A", "mp_status": "live"}])]
    assert transport.holder == "api-user:u:edrts"


def test_a_record_over_5_kb_or_without_an_id_is_refused_before_sending() -> None:
    transport = RecordingTransport({"status": "success", "data": {}})
    client = EdrtsClient(transport)
    big = {"id": "A", "mp_reason": "x" * 5000}
    assert record_bytes(big) > 5000

    with pytest.raises(ValueError, match="over 5 000"):
        client.put_records(db_id="7", records=[big])
    with pytest.raises(ValueError, match="without an id"):
        client.put_records(db_id="7", records=[{"mp_status": "live"}])
    assert transport.calls == []


def test_a_jobs_outcome_and_a_delete() -> None:
    transport = RecordingTransport(
        {"status": "processed", "records": 2, "errors": [{"id": "A", "message": "bad"}]}
    )
    client = EdrtsClient(transport)

    job = client.job(db_id="7", correlation_id="abc")

    assert (job.status, job.records, job.errors) == (
        "processed",
        2,
        ({"id": "A", "message": "bad"},),
    )
    assert transport.calls[-1][:2] == ("GET", "/db/7/abc")
    transport.answer = {"status": "success", "data": {"sku_count": 1}}
    client.delete(db_id="7", ids=["A"])
    assert transport.calls[-1] == ("DELETE", "/db/7", ["A"])


def test_a_job_is_read_at_its_details_url_or_the_two_segment_path() -> None:
    transport = RecordingTransport({"status": "queued", "records": 1})
    client = EdrtsClient(transport)

    client.job(db_id="7", details_url="http://edrts.test/catalog/rest.php/db/7/912")
    client.job(db_id="7", correlation_id="c 1/x")
    # A details_url elsewhere is not followed with our API token: the path is built.
    client.job(db_id="7", correlation_id="abc", details_url="http://elsewhere.test/db/7/1")

    assert [call[1] for call in transport.calls] == ["/db/7/912", "/db/7/c%201%2Fx", "/db/7/abc"]
    with pytest.raises(ValueError, match="details_url or its correlation id"):
        client.job(db_id="7", details_url="http://elsewhere.test/db/7/1")
