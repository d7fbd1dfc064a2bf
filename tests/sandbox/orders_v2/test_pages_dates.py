"""The sandbox's pages write times as ISO 8601 UTC, like the rest of the sandbox, never
Django's English default ("Nov. 24, 2026, 12:35 a.m.")."""

from __future__ import annotations

import re

import requests

from tests.sandbox.conftest import Api
from tests.support.sandbox_process import SandboxProcess

ISO_UTC = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|\+00:00)"


def test_the_v2_pages_write_iso_8601_utc_times(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.v2_settings("alice", import_interval_seconds=60)
    sandbox.v2_import("alice")
    html = requests.get(sandbox.base_url + "/sandbox/v2/", timeout=10).text
    assert re.search(rf"Sandbox time <b>{ISO_UTC}</b>", html), html
    assert re.search(rf"last import <b>{ISO_UTC}</b>", html), html
    assert not re.search(r"\b(a\.m\.|p\.m\.)", html)
