"""Inspection API and page, request log hygiene, the CLI, auto-ship and reset."""

from __future__ import annotations

import subprocess
import sys
import time

import requests

from tests.sandbox.conftest import (
    CLIENT_ID,
    CLIENT_SECRET,
    REDIRECT_URL,
    Api,
    exchange_code,
    order_body,
)
from tests.support.sandbox_process import REPO_DIR, SandboxProcess


def test_request_log_redacts_secrets_and_counts_by_endpoint(
    alice: Api, sandbox: SandboxProcess
) -> None:
    alice.put_order(order_body("L-1"))
    alice.call("GET", "/orders/L-1")
    alice.call("GET", "/orders/NOPE")
    log = sandbox.requests_log()
    text = str(log)
    assert alice.access_token not in text
    assert alice.refresh_token not in text
    assert CLIENT_SECRET not in text
    put = next(e for e in log if e["endpoint"] == "put_order")
    assert (put["method"], put["path"], put["status"]) == ("PUT", "/api/v1/orders/L-1", 201)
    assert put["authorization"] == "Bearer ***"
    counts = sandbox.state()["requests"]["by_endpoint"]
    assert counts["put_order"] == {"201": 1}
    assert counts["get_order"] == {"200": 1, "404": 1}
    assert counts["access_token"] == {"200": 1}
    assert sandbox.requests_log(endpoint="get_order", limit=1)[0]["status"] == 404


def test_authorize_query_is_redacted(accounts: SandboxProcess) -> None:
    requests.get(
        accounts.api_url + "/authorize",
        params={"code": "secret-code", "client_id": "nobody"},
        timeout=5,
    )
    [entry] = accounts.requests_log(endpoint="authorize")
    assert "secret-code" not in entry["query"]


def test_request_log_is_bounded(alice: Api, sandbox: SandboxProcess) -> None:
    since = sandbox.requests_log(limit=1)[-1]["seq"]
    for _ in range(5):
        alice.call("GET", "/orders")
    assert len(sandbox.requests_log(since_seq=since)) == 5
    assert len(sandbox.requests_log(limit=2)) == 2


def test_state_page_renders(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("HTML-1"))
    sandbox.ship("HTML-1", carrier="DHL")
    page = requests.get(sandbox.base_url + "/sandbox/", timeout=5)
    assert page.status_code == 200
    assert "HTML-1" in page.text
    assert "DHL" in page.text
    assert alice.access_token not in page.text
    # People read sentences and tables, not Python's dict text.
    assert "{&#x27;" not in page.text
    assert "{'" not in page.text
    assert "1 × 201" in page.text  # noqa: RUF001 — the PUT, counted by status


def test_control_order_lookup_needs_seller_when_ambiguous(
    alice: Api, bob: Api, sandbox: SandboxProcess
) -> None:
    alice.put_order(order_body("AMB-1"))
    bob.put_order(order_body("AMB-1"))
    response = requests.get(sandbox.control_url + "/orders/AMB-1", timeout=5)
    assert response.status_code == 409
    assert {m["seller"] for m in response.json()["matches"]} == {"alice", "bob"}
    assert sandbox.ship("AMB-1", seller="bob")["status"] == "COMPLETE"
    assert sandbox.order("AMB-1", seller="alice")["fulfillment_status"] == "UNFULFILLED"


def test_auto_ship_ships_awaiting_orders(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("AS-1"))
    alice.put_order(order_body("AS-2", marketplace_state="PENDING"))
    sandbox.set_auto_ship(0)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if sandbox.order("AS-1")["fulfillment_status"] == "COMPLETE":
            break
        time.sleep(0.1)
    sandbox.set_auto_ship(None)
    assert sandbox.order("AS-1")["fulfillment_status"] == "COMPLETE"
    assert sandbox.order("AS-2")["fulfillment_status"] == "UNFULFILLED"


def test_cli_register_client_and_create_seller_are_idempotent(sandbox: SandboxProcess) -> None:
    def cli(*args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "sandbox", *args, "--db", str(sandbox.db_path)],
            cwd=REPO_DIR,
            check=True,
            capture_output=True,
            timeout=60,
        )

    for _ in range(2):
        cli(
            "register-client",
            "--client-id",
            CLIENT_ID,
            "--client-secret",
            CLIENT_SECRET,
            "--redirect-url",
            REDIRECT_URL,
            "--name",
            "Marketplace X",
        )
        cli("create-seller", "--username", "carol", "--password", "carol-pw")
    clients = requests.get(sandbox.control_url + "/clients", timeout=5).json()["clients"]
    sellers = requests.get(sandbox.control_url + "/sellers", timeout=5).json()["sellers"]
    assert [c["client_id"] for c in clients] == [CLIENT_ID]
    assert [s["username"] for s in sellers] == ["carol"]
    code = sandbox.mint_code(CLIENT_ID, "carol", REDIRECT_URL)
    assert exchange_code(sandbox, code).status_code == 200


def test_mint_code_refuses_an_unregistered_redirect(accounts: SandboxProcess) -> None:
    response = requests.post(
        accounts.control_url + "/codes",
        json={"client_id": CLIENT_ID, "seller": "alice", "redirect_url": "https://evil.example"},
        timeout=5,
    )
    assert response.status_code == 400


def test_reset_clears_everything(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("R-1"))
    sandbox.shift_clock(100)
    sandbox.set_rotation(False)
    sandbox.reset()
    state = sandbox.state()
    assert state["orders"]["total"] == 0
    assert state["grants"] == []
    assert state["clock_offset_seconds"] == 0
    assert state["rotation_enabled"] is True
    assert state["counters"]["token_requests"] == {}
    assert requests.get(sandbox.control_url + "/clients", timeout=5).json()["clients"] == []
