"""An EDRTS client over real HTTP: one API user's token (``x-api-key``) and the database it
reaches (the small catalog of the Platform API tests)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from tests.sandbox.platform_client import PlatformApi, platform_for
from tests.support.sandbox_process import SandboxProcess


@dataclass
class Edrts:
    sandbox: SandboxProcess
    platform: PlatformApi
    http: requests.Session

    @property
    def token(self) -> str:
        return self.platform.token

    @property
    def db_id(self) -> str:
        return self.platform.db_id

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"x-api-key": self.token, **kwargs.pop("headers", {})}
        kwargs.setdefault("timeout", 30)
        return self.http.request(method, self.sandbox.edrts_url + path, headers=headers, **kwargs)

    def put(self, records: Any, db_id: str | None = None, **kwargs: Any) -> requests.Response:
        return self.call("PUT", f"/db/{db_id or self.db_id}", json=records, **kwargs)

    def delete(self, ids: Any, db_id: str | None = None) -> requests.Response:
        return self.call("DELETE", f"/db/{db_id or self.db_id}", json=ids)

    def job(self, batch: dict) -> requests.Response:
        """The job of a request (every batch of it) at the reference's two-segment path."""
        return self.call("GET", f"/db/{batch['db_id']}/{batch['correlation_id']}")

    def batch_job(self, batch: dict) -> requests.Response:
        """One batch at the older three-segment path (reading B of edrts_job_path)."""
        return self.call(
            "GET", f"/db/{batch['db_id']}/{batch['correlation_id']}/{batch['batch_index']}"
        )

    def accepted(self, response: requests.Response) -> list[dict]:
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["status"] == "success"
        return body["data"]["batches"]

    def job_done(self, batch: dict, timeout: float = 10.0) -> dict:
        """Poll the job endpoint until the batch is no longer queued."""
        deadline = time.monotonic() + timeout
        while True:
            response = self.job(batch)
            assert response.status_code == 200, response.text
            if response.json()["status"] != "queued":
                return response.json()
            assert time.monotonic() < deadline, f"batch still queued: {batch}"
            time.sleep(0.05)

    def rows(self) -> dict[str, dict]:
        return {row["id"]: row for row in self.sandbox.db_rows(self.db_id, per_page=1000)}


@pytest.fixture
def edrts(sandbox: SandboxProcess) -> Iterator[Edrts]:
    sandbox.edrts_state(delay_seconds=0.0)
    with requests.Session() as http:
        yield Edrts(sandbox, platform_for(sandbox), http)
