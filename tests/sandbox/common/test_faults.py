"""Fault injection as a client sees it, and deterministic schedules consumed exactly."""

from __future__ import annotations

import time

import pytest
import requests

from tests.sandbox.conftest import CLIENT_ID, Api, exchange_code, order_body
from tests.support.sandbox_process import SandboxProcess


def test_rate_limit_with_retry_after_and_reset(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="list_orders", kind="429", count=1, retry_after=7)
    limited = alice.call("GET", "/orders")
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "7"
    assert limited.headers["X-Rate-Limit-Remaining"] == "0"
    assert int(limited.headers["X-Rate-Limit-Reset"]) >= time.time() + 5
    assert alice.call("GET", "/orders").status_code == 200


def test_rate_limit_reset_in_seconds_without_retry_after(
    alice: Api, sandbox: SandboxProcess
) -> None:
    sandbox.set_faults(
        endpoint="list_orders",
        kind="rate_limit",
        count=1,
        retry_after=3,
        reset_format="seconds",
        send_retry_after=False,
    )
    limited = alice.call("GET", "/orders")
    assert limited.status_code == 429
    assert "Retry-After" not in limited.headers
    assert limited.headers["X-Rate-Limit-Reset"] == "3"


@pytest.mark.parametrize(("kind", "status"), [("500", 500), ("503", 503), ("502", 502)])
def test_server_errors(alice: Api, sandbox: SandboxProcess, kind: str, status: int) -> None:
    sandbox.set_faults(endpoint="put_order", kind=kind, count=1)
    response = alice.put_order(order_body("FA-1"))
    assert response.status_code == status
    assert sandbox.state()["orders"]["total"] == 0  # answered instead of the view
    assert alice.put_order(order_body("FA-1")).status_code == 201


def test_bad_gateway_body_is_not_json(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="get_order", kind="bad_gateway", count=1)
    response = alice.call("GET", "/orders/X")
    with pytest.raises(requests.JSONDecodeError):
        response.json()
    assert "Bad Gateway" in response.text


def test_error_after_the_view_ran_keeps_the_write(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="put_order", kind="500", count=1, after_view=True)
    assert alice.put_order(order_body("FA-2")).status_code == 500
    assert sandbox.state()["orders"]["total"] == 1
    assert alice.put_order(order_body("FA-2")).status_code == 200  # the retry is an update


def test_latency_is_measurable(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="list_orders", kind="latency", latency_ms=400, count=1)
    started = time.monotonic()
    response = alice.call("GET", "/orders")
    assert response.status_code == 200
    assert time.monotonic() - started >= 0.4
    started = time.monotonic()
    alice.call("GET", "/orders")
    assert time.monotonic() - started < 0.3


def test_hang_beyond_the_client_timeout(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="get_order", kind="hang", hang_seconds=2, count=1)
    with pytest.raises(requests.Timeout):
        alice.call("GET", "/orders/X", timeout=0.5)
    assert alice.call("GET", "/orders/X", timeout=5).status_code == 404
    # The sandbox still answers the abandoned request when its hang ends (a 504 in its
    # log); wait for it here, or it lands in the counters of whichever test runs next.
    deadline = time.monotonic() + 10
    while not any(e["status"] == 504 for e in sandbox.requests_log(endpoint="get_order")):
        assert time.monotonic() < deadline, "the hung request never finished"
        time.sleep(0.1)


def test_malformed_json(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="list_orders", kind="malformed_json", count=1)
    response = alice.call("GET", "/orders")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    with pytest.raises(requests.JSONDecodeError):
        response.json()


def test_schedule_skips_then_fires_exactly_count_times(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="list_orders", kind="503", skip=2, count=3)
    statuses = [alice.call("GET", "/orders").status_code for _ in range(7)]
    assert statuses == [200, 200, 503, 503, 503, 200, 200]
    [rule] = sandbox.faults()
    assert (rule["fired"], rule["remaining"], rule["seen"]) == (3, 0, 5)


def test_rules_only_touch_their_endpoint(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("FA-3"))
    sandbox.set_faults(endpoint="fulfillments", kind="500", count=1)
    assert alice.call("GET", "/orders/FA-3").status_code == 200
    assert alice.call("GET", "/orders/FA-3/fulfillments").status_code == 500
    assert alice.call("GET", "/orders/FA-3/fulfillments").status_code == 200


def test_star_matches_every_api_endpoint_in_order(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(
        {"endpoint": "*", "kind": "429", "count": 1},
        {"endpoint": "*", "kind": "500", "count": 1},
    )
    assert alice.put_order(order_body("FA-4")).status_code == 429
    assert alice.call("GET", "/orders").status_code == 500
    assert alice.call("POST", "/orders/FA-4/errors", json=[]).status_code == 404


def test_token_endpoint_faults(accounts: SandboxProcess) -> None:
    accounts.set_faults(endpoint="access_token", kind="503", count=1)
    code = accounts.mint_code(CLIENT_ID, "alice")
    assert exchange_code(accounts, code).status_code == 503
    assert exchange_code(accounts, code).status_code == 200  # the code was not spent


def test_probability_is_reproducible_with_a_seed(alice: Api, sandbox: SandboxProcess) -> None:
    def run() -> list[int]:
        sandbox.clear_faults()
        sandbox.set_faults(endpoint="list_orders", kind="500", probability=0.5, seed=42)
        return [alice.call("GET", "/orders").status_code for _ in range(20)]

    first, second = run(), run()
    assert first == second
    assert 500 in first
    assert 200 in first


def test_clear_and_reset_remove_faults(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="*", kind="500")
    assert alice.call("GET", "/orders").status_code == 500
    sandbox.clear_faults()
    assert alice.call("GET", "/orders").status_code == 200
    sandbox.set_faults(endpoint="*", kind="500")
    sandbox.reset(keep_accounts=True)
    assert sandbox.faults() == []


def test_bad_fault_spec_is_refused(sandbox: SandboxProcess) -> None:
    response = requests.post(
        sandbox.control_url + "/faults",
        json={"endpoint": "put_order", "kind": "explode"},
        timeout=5,
    )
    assert response.status_code == 400
    response = requests.post(
        sandbox.control_url + "/faults", json={"endpoint": "nowhere", "kind": "500"}, timeout=5
    )
    assert response.status_code == 400
