"""Shared pieces of the Authentication/Platform API tests: an API user with a token, a small
database, and a client for /api.php. Everything goes over real HTTP to the sandbox."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import requests

from tests.support.sandbox_process import SandboxProcess

USERNAME, PASSWORD, EMAIL = "mp-api", "mp-api-pass", "api@mp.example"
FIELDS = ["id", "title", "price", "quantity", "brand"]
SMALL_ROWS = [
    {"id": "A-1", "title": 'Mug, "Blue"', "price": "12.50", "quantity": "3", "brand": "Acme"},
    {"id": "A-2", "title": "Plate\twith tab", "price": "4.00", "quantity": "0", "brand": ""},
    {"id": "A-3", "title": "Bowl", "price": "7.25", "quantity": "12", "brand": "Acme"},
]


@dataclass
class PlatformApi:
    """One API token's view of /api.php, with the database it reaches."""

    sandbox: SandboxProcess
    token: str
    db_id: str
    account_id: str
    http: requests.Session

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {
            "x-api-key": self.token,
            "Authorization": f"Bearer {self.token}",
            **kwargs.pop("headers", {}),
        }
        kwargs.setdefault("timeout", 10)
        return self.http.request(
            method, self.sandbox.platform_url + path, headers=headers, **kwargs
        )

    def add_export(self, **settings: Any) -> dict:
        body = {"name": "feed", "file_name": "feed.csv", **settings}
        response = self.call("POST", f"/dbs/{self.db_id}/exports", json=body)
        assert response.status_code == 200, response.text
        return response.json()

    def file_of(self, **settings: Any) -> bytes:
        """The bytes a run of a new export with ``settings`` writes."""
        export = self.add_export(**settings)
        run = self.sandbox.export_run(export["id"])
        assert run["status"] == "success", run
        return self.sandbox.export_run_file(run["id"])


def platform_for(
    sandbox: SandboxProcess,
    rows: list[dict] | None = None,
    fields: list[str] | None = None,
    token_name: str = "tests",
) -> PlatformApi:
    """An account with one database holding ``rows``, an API user reaching it, its token."""
    db = sandbox.db_create(
        "Small catalog",
        account_name="Small Shop",
        rows=SMALL_ROWS if rows is None else rows,
        fields=fields or FIELDS,
    )
    sandbox.api_user_create(USERNAME, PASSWORD, EMAIL, account_ids=[str(db["account_id"])])
    token = sandbox.platform_login(USERNAME, PASSWORD, EMAIL, name=token_name)
    return PlatformApi(sandbox, token, str(db["id"]), str(db["account_id"]), requests.Session())
