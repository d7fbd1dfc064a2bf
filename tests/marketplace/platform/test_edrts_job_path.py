"""The EDRTS job over HTTP: the app reads a job at the ``details_url`` the platform gave
(``…/db/{db_id}/{id}``, two segments) or at ``/db/{db_id}/{correlation_id}``; the sandbox
serves the older three-segment path only under reading B of ``edrts_job_path``."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from marketplace.platform.edrts import EdrtsClient
from marketplace.platform.transport import ApiKeyTransport
from tests.support.sandbox_process import SandboxProcess

USERNAME, PASSWORD, EMAIL = "edrts-job", "edrts-job-pass", "edrts-job@mp.example"


def client_for(sandbox: SandboxProcess) -> tuple[EdrtsClient, str]:
    db = sandbox.db_create(
        "Job catalog", account_name="Job Shop", rows=[{"id": "A-1"}, {"id": "A-2"}], fields=["id"]
    )
    sandbox.api_user_create(USERNAME, PASSWORD, EMAIL, account_ids=[str(db["account_id"])])
    token = sandbox.platform_login(USERNAME, PASSWORD, EMAIL, name="app")
    transport = ApiKeyTransport(
        base_url=sandbox.edrts_url, token=token, api_user=USERNAME, group="edrts"
    )
    return EdrtsClient(transport), str(db["id"])


def processed(client: EdrtsClient, **where: str) -> Any:
    deadline = time.monotonic() + 10
    while (job := client.job(**where)).status == "queued":
        assert time.monotonic() < deadline, where
        time.sleep(0.05)
    return job


@pytest.mark.parametrize("answer", ["A", "B"])
def test_the_app_reads_a_job_under_either_answer_shape(
    sandbox: SandboxProcess, answer: str
) -> None:
    sandbox.reset()
    sandbox.readings(edrts_answer=answer)
    client, db_id = client_for(sandbox)
    first = client.put_records(db_id=db_id, records=[{"id": "A-1", "mp_status": "listed"}])
    sandbox.edrts_wait_idle()
    second = client.put_records(db_id=db_id, records=[{"id": "A-2", "mp_status": "listed"}])

    if answer == "A":  # the batches name the correlation id: the two-segment path
        (batch,) = first.batches
        job = processed(client, db_id=db_id, correlation_id=batch.correlation_id)
    else:  # the queue shape names the last processed job's details_url: followed
        details_url = second.last_processed_job["details_url"]
        assert re.fullmatch(re.escape(sandbox.edrts_url) + rf"/db/{db_id}/\d+", details_url)
        job = processed(client, db_id=db_id, details_url=details_url)

    assert (job.status, job.records, job.errors) == ("processed", 1, ())
    paths = [e["path"] for e in sandbox.requests_log(limit=50) if e["method"] == "GET"]
    assert paths
    assert all(re.fullmatch(r"/catalog/rest\.php/db/[^/]+/[^/]+", p) for p in paths), paths
    assert sandbox.violations()["total"] == 0
