"""Export delivery over real HTTP to a small server run by the test: PUT to host + file_name
with HTTP Basic and the format's Content-Type; retries max_attempts times,
time_between_attempts apart; a timeout per attempt; error_flag in last_log on failure."""

from __future__ import annotations

import base64
import gzip
import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.sandbox.platform_client import PlatformApi, platform_for
from tests.support.sandbox_process import SandboxProcess


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Destination:
    """A folder that takes PUTs: answers ``statuses`` in turn (then 201), after ``delay``."""

    port: int
    statuses: list[int] = field(default_factory=list)
    delay: float = 0.0
    received: list[Received] = field(default_factory=list)

    @property
    def folder(self) -> str:
        return f"http://127.0.0.1:{self.port}/catalog/feeds/k1/"


@pytest.fixture
def destination() -> Iterator[Destination]:
    state = Destination(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            state.received.append(Received(self.path, dict(self.headers), body, time.monotonic()))
            time.sleep(state.delay)
            status = state.statuses.pop(0) if state.statuses else 201
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def api(sandbox: SandboxProcess) -> PlatformApi:
    return platform_for(sandbox)


def _export(api: PlatformApi, destination: Destination, **settings: object) -> dict:
    defaults = {
        "protocol": "http",
        "host": destination.folder,
        "file_name": "feed.csv.gz",
        "username": "feed-k1",
        "password": "s3cret",
        "compression": "gzip",
        "quoted_fields": "1",
        "export_fields": [
            {"field_name": "id", "export_field_name": "sku"},
            {"field_name": "price", "export_field_name": "price"},
        ],
    }
    return api.add_export(**{**defaults, **settings})


def test_the_file_is_put_to_the_folder_with_basic_auth_and_its_type(
    api: PlatformApi, sandbox: SandboxProcess, destination: Destination
) -> None:
    export = _export(api, destination)

    run = sandbox.export_run(export["id"])

    assert run["status"] == "success"
    [put] = destination.received
    assert put.path == "/catalog/feeds/k1/feed.csv.gz"
    assert put.headers["Authorization"] == "Basic " + base64.b64encode(b"feed-k1:s3cret").decode()
    assert put.headers["Content-Type"] == "application/gzip"
    assert gzip.decompress(put.body) == (
        b'"sku","price"\n"A-1","12.50"\n"A-2","4.00"\n"A-3","7.25"\n'
    )
    assert put.body == sandbox.export_run_file(run["id"])
    last_log = api.call("GET", f"/dbs/{api.db_id}/exports/{export['id']}").json()["last_log"]
    assert last_log["error_flag"] == "0"
    assert destination.folder + "feed.csv.gz" in last_log["message"]


@pytest.mark.parametrize(
    ("changes", "content_type"),
    [
        ({"export_format": "json", "compression": ""}, "application/json"),
        ({"export_format": "xml", "compression": ""}, "application/xml"),
        ({"export_format": "delimited", "compression": ""}, "text/csv"),
        ({"compression": "zip"}, "application/zip"),
    ],
)
def test_content_type_by_format_and_compression(
    api: PlatformApi,
    sandbox: SandboxProcess,
    destination: Destination,
    changes: dict,
    content_type: str,
) -> None:
    export = _export(api, destination)
    api.call("PUT", f"/dbs/{api.db_id}/exports/{export['id']}", json=changes)

    sandbox.export_run(export["id"])

    assert destination.received[0].headers["Content-Type"] == content_type


def test_a_refused_delivery_is_retried_time_between_attempts_apart(
    api: PlatformApi, sandbox: SandboxProcess, destination: Destination
) -> None:
    destination.statuses = [503, 500]
    export = _export(api, destination, max_attempts="3", time_between_attempts="0.5")

    run = sandbox.export_run(export["id"])

    assert run["status"] == "success"
    assert run["attempts"] == 3
    assert len(destination.received) == 3
    gaps = [b.at - a.at for a, b in itertools.pairwise(destination.received)]
    assert all(gap >= 0.45 for gap in gaps), gaps
    assert [log["error_flag"] for log in run["logs"]] == [True, True, False]
    assert "HTTP 503" in run["logs"][0]["message"]


def test_a_delivery_that_keeps_failing_ends_with_error_flag_in_last_log(
    api: PlatformApi, sandbox: SandboxProcess, destination: Destination
) -> None:
    destination.statuses = [500, 500, 500]
    export = _export(api, destination, max_attempts="2", time_between_attempts="0")

    run = sandbox.export_run(export["id"])

    assert run["status"] == "failed"
    assert len(destination.received) == 2
    got = api.call("GET", f"/dbs/{api.db_id}/exports/{export['id']}").json()
    assert got["status"] == "failed"
    assert got["last_log"]["error_flag"] == "1"
    assert "after 2 attempt(s)" in got["last_log"]["message"]


def test_an_attempt_that_outlasts_the_timeout_fails(
    api: PlatformApi, sandbox: SandboxProcess, destination: Destination
) -> None:
    destination.delay = 3
    export = _export(api, destination, max_attempts="1", timeout="0.5")

    started = time.monotonic()
    run = sandbox.export_run(export["id"])

    assert time.monotonic() - started < 2.5
    assert run["status"] == "failed"
    assert "timeout" in run["logs"][-1]["message"]


def test_a_destination_that_is_not_listening_fails_the_run(
    api: PlatformApi, sandbox: SandboxProcess
) -> None:
    export = api.add_export(
        protocol="http", host="http://127.0.0.1:9/feeds/", max_attempts="1", file_name="f.csv"
    )

    run = sandbox.export_run(export["id"])

    assert run["status"] == "failed"
    assert "could not connect" in run["logs"][-1]["message"]


def test_a_changed_row_reaches_the_next_delivery(
    api: PlatformApi, sandbox: SandboxProcess, destination: Destination
) -> None:
    export = _export(api, destination, compression="")
    sandbox.export_run(export["id"])

    sandbox.db_rows_change(api.db_id, rows=[{"id": "A-2", "price": "3.50"}], delete=["A-3"])
    sandbox.export_run(export["id"])

    assert destination.received[0].body.count(b"\n") == 4
    assert destination.received[1].body == b'"sku","price"\n"A-1","12.50"\n"A-2","3.50"\n'
