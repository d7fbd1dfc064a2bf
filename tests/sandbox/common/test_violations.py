"""Breaches of the contract's rules are counted: early retries after a 429/503, a PUT
SHIPPED while lines wait for the seller, and a reused refresh token."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import requests

from tests.sandbox.conftest import Api, order_body, refresh
from tests.support.sandbox_process import SandboxProcess


def _kinds(sandbox: SandboxProcess) -> dict[str, int]:
    return {k: n for k, n in sandbox.violations()["by_kind"].items() if n}


# -- early retries -------------------------------------------------------------------------


def test_a_request_before_retry_after_has_passed_is_counted(
    alice: Api, sandbox: SandboxProcess
) -> None:
    sandbox.set_faults(endpoint="list_orders", kind="429", count=1, retry_after=5)
    limited = alice.call("GET", "/orders")
    assert limited.status_code == 429
    time.sleep(0.6)  # past the in-flight grace (0.4 s), long before the 5 s are up
    early = requests.get(  # another request, on a connection of its own
        sandbox.api_url + "/orders/ANY",
        headers={"Authorization": f"Bearer {alice.access_token}"},
        timeout=10,
    )
    assert early.status_code == 404  # counted, not refused
    report = sandbox.violations()
    assert report["total"] == 1
    assert report["by_kind"]["early_retry"] == 1
    [violation] = report["recent"]
    assert violation["kind"] == "early_retry"
    assert violation["seller"] == "alice"
    assert violation["request_id"] == early.headers["X-Request-Id"]
    assert limited.headers["X-Request-Id"] in violation["detail"]
    assert violation["at"]


def test_a_request_after_the_wait_is_not_counted(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_retry_grace(0)
    sandbox.set_faults(endpoint="list_orders", kind="429", count=1, retry_after=1)
    assert alice.call("GET", "/orders").status_code == 429
    time.sleep(1.2)
    assert alice.call("GET", "/orders").status_code == 200
    assert sandbox.violations()["total"] == 0


def test_503_says_retry_after_and_holds_the_seller_to_it(
    alice: Api, sandbox: SandboxProcess
) -> None:
    sandbox.set_retry_grace(0)
    sandbox.set_faults(endpoint="put_order", kind="503", count=1, retry_after=3)
    unavailable = alice.put_order(order_body("V-1"))
    assert unavailable.status_code == 503
    assert unavailable.headers["Retry-After"] == "3"
    assert alice.put_order(order_body("V-1")).status_code == 201
    assert _kinds(sandbox) == {"early_retry": 1}


def test_rate_limit_reset_alone_is_a_wait_too(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_retry_grace(0)
    sandbox.set_faults(
        endpoint="list_orders", kind="429", count=1, retry_after=3, send_retry_after=False
    )
    limited = alice.call("GET", "/orders")
    assert "Retry-After" not in limited.headers
    assert int(limited.headers["X-Rate-Limit-Reset"]) >= time.time() + 2
    alice.call("GET", "/orders")
    assert _kinds(sandbox) == {"early_retry": 1}


def test_the_wait_binds_only_the_seller_it_was_given_to(
    alice: Api, bob: Api, sandbox: SandboxProcess
) -> None:
    sandbox.set_retry_grace(0)
    sandbox.set_faults(endpoint="list_orders", kind="429", count=1, retry_after=5)
    assert alice.call("GET", "/orders").status_code == 429
    assert bob.call("GET", "/orders").status_code == 200
    assert sandbox.violations()["total"] == 0
    alice.call("GET", "/orders")
    assert [v["seller"] for v in sandbox.violations()["recent"]] == ["alice"]


def test_token_endpoint_is_not_seller_scoped(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_retry_grace(0)
    sandbox.set_faults(endpoint="access_token", kind="429", count=1, retry_after=5)
    assert refresh(sandbox, alice.refresh_token).status_code == 429
    assert refresh(sandbox, alice.refresh_token).status_code == 200
    assert alice.call("GET", "/orders").status_code == 200
    assert sandbox.violations()["total"] == 0


def _sibling_get(alice: Api, path: str) -> requests.Response:
    """A request from another thread or worker: a connection of its own."""
    return requests.get(
        alice.sandbox.api_url + path,
        headers={"Authorization": f"Bearer {alice.access_token}"},
        timeout=10,
    )


def test_a_siblings_request_within_the_in_flight_grace_is_not_counted(
    alice: Api, sandbox: SandboxProcess
) -> None:
    sandbox.set_retry_grace(30)
    sandbox.set_faults(endpoint="list_orders", kind="429", count=1, retry_after=60)
    assert alice.call("GET", "/orders").status_code == 429
    # Another request for the seller, on another connection: it may have been on its way.
    assert _sibling_get(alice, "/orders/ANY").status_code == 404
    assert sandbox.violations()["total"] == 0
    sandbox.set_retry_grace(0)  # the same request, with no grace, is early
    _sibling_get(alice, "/orders/ANY")
    assert _kinds(sandbox) == {"early_retry": 1}


def test_the_retry_itself_gets_no_grace(alice: Api, sandbox: SandboxProcess) -> None:
    # An instant retry (the issue saw 18-41 ms) of the refused request, even on a new
    # connection, was certainly sent after the client read the 429.
    sandbox.set_retry_grace(30)
    sandbox.set_faults(endpoint="list_orders", kind="429", count=1, retry_after=60)
    assert alice.call("GET", "/orders").status_code == 429
    assert _sibling_get(alice, "/orders").status_code == 200
    assert _kinds(sandbox) == {"early_retry": 1}


def test_the_next_request_on_the_same_connection_gets_no_grace(
    alice: Api, sandbox: SandboxProcess
) -> None:
    # HTTP/1.1 keep-alive: the next request on a connection follows the previous answer.
    sandbox.set_retry_grace(30)
    sandbox.set_faults(endpoint="list_orders", kind="429", count=1, retry_after=60)
    assert alice.call("GET", "/orders").status_code == 429
    assert alice.call("GET", "/orders/ANY").status_code == 404
    assert _kinds(sandbox) == {"early_retry": 1}


def test_a_request_that_arrived_before_the_429_was_sent_is_not_counted(
    alice: Api, sandbox: SandboxProcess
) -> None:
    # given a 429 that takes 2 s to leave, and no grace at all
    sandbox.set_retry_grace(0)
    sandbox.set_faults(
        {"endpoint": "list_orders", "kind": "latency", "latency_ms": 2000, "count": 1},
        {"endpoint": "list_orders", "kind": "429", "count": 1, "retry_after": 30},
    )
    headers = {"Authorization": f"Bearer {alice.access_token}"}

    def slow_listing() -> tuple[int, float]:
        response = requests.get(alice.sandbox.api_url + "/orders", headers=headers, timeout=10)
        return response.status_code, time.monotonic()

    with ThreadPoolExecutor(max_workers=1) as pool:
        limited = pool.submit(slow_listing)
        # when another call for the same seller is made while the 429 is on its way
        in_flight = alice.call("GET", "/orders/ANY")
        in_flight_done = time.monotonic()
        status, limited_done = limited.result()
    assert status == 429
    assert in_flight.status_code == 404
    assert in_flight_done < limited_done  # it really arrived before the 429 was sent
    # then it is not counted; a call after the 429 is
    assert sandbox.violations()["total"] == 0
    alice.call("GET", "/orders/ANY")
    assert _kinds(sandbox) == {"early_retry": 1}


# -- PUT SHIPPED while lines are unfulfilled ------------------------------------------------


def test_shipped_while_a_line_is_unfulfilled_is_counted(
    alice: Api, sandbox: SandboxProcess
) -> None:
    alice.put_order(order_body("SW-1"))
    sandbox.ship("SW-1", lines=[{"mp_line_number": "1", "quantity": 3}])
    shipped = alice.put_order(order_body("SW-1", marketplace_state="SHIPPED"))
    assert shipped.status_code == 200  # accepted: the contract does not say it is refused
    [violation] = sandbox.violations()["recent"]
    assert violation["kind"] == "shipped_while_unfulfilled"
    assert violation["seller"] == "alice"
    assert violation["request_id"] == shipped.headers["X-Request-Id"]
    assert "SW-1" in violation["detail"]
    assert "2 (1 pending)" in violation["detail"]
    # sending SHIPPED again does not move the order, so it is not counted again
    alice.put_order(order_body("SW-1", marketplace_state="SHIPPED"))
    assert sandbox.violations()["total"] == 1


def test_placing_an_order_as_shipped_is_counted(alice: Api, sandbox: SandboxProcess) -> None:
    assert alice.put_order(order_body("SW-2", marketplace_state="SHIPPED")).status_code == 201
    assert _kinds(sandbox) == {"shipped_while_unfulfilled": 1}


def test_shipped_after_every_line_is_settled_is_fine(alice: Api, sandbox: SandboxProcess) -> None:
    alice.put_order(order_body("SW-3"))
    alice.put_order(order_body("SW-4"))
    sandbox.ship("SW-3", lines=[{"mp_line_number": "1", "quantity": 2}])
    sandbox.cancel("SW-3")  # the rest: 1 of line 1, 1 of line 2
    alice.put_order(order_body("SW-3", marketplace_state="SHIPPED"))
    alice.put_order(order_body("SW-4", marketplace_state="CANCELLED"))
    assert sandbox.violations()["total"] == 0


# -- refresh-token reuse -----------------------------------------------------------------


def test_refresh_token_reuse_is_counted(alice: Api, sandbox: SandboxProcess) -> None:
    assert refresh(sandbox, alice.refresh_token).status_code == 200
    reuse = refresh(sandbox, alice.refresh_token)
    assert reuse.status_code == 401
    [violation] = sandbox.violations()["recent"]
    assert violation["kind"] == "refresh_token_reuse"
    assert violation["seller"] == "alice"
    assert violation["request_id"] == reuse.headers["X-Request-Id"]
    # The successor of the spent token was never presented: the answer was never stored
    assert "its successor was never presented" in violation["detail"], violation["detail"]


def test_a_reuse_after_the_newer_token_was_spent_says_the_client_sent_an_older_one(
    alice: Api, sandbox: SandboxProcess
) -> None:
    # Given a token rotated twice: the client used the newer token, then the oldest
    second = refresh(sandbox, alice.refresh_token)
    assert second.status_code == 200
    assert refresh(sandbox, second.json()["refresh_token"]).status_code == 200
    # When the first (spent) one comes back
    assert refresh(sandbox, alice.refresh_token).status_code == 401
    # Then the violation says which of the two causes it was
    [violation] = sandbox.violations()["recent"]
    assert violation["kind"] == "refresh_token_reuse"
    assert "the client held the newer token and sent an older one" in violation["detail"]


def test_reading_b_exchanges_a_spent_token_again_within_the_interval(
    alice: Api, sandbox: SandboxProcess
) -> None:
    # Given a reuse interval (reading B) and a refresh whose answer the client lost
    sandbox.readings(refresh_reuse="B")
    lost = refresh(sandbox, alice.refresh_token)
    assert lost.status_code == 200

    # When the client presents the spent token again, at once
    again = refresh(sandbox, alice.refresh_token)

    # Then it gets a new pair that goes on working, the regrant is counted, not a
    # violation
    assert again.status_code == 200, again.text
    fresh = again.json()["refresh_token"]
    assert fresh not in (alice.refresh_token, lost.json()["refresh_token"])
    assert refresh(sandbox, fresh).status_code == 200
    assert sandbox.state()["counters"]["refresh_regrant"] == 1
    assert sandbox.violations()["total"] == 0
    # Once a newer token was spent, the first is a reuse even within the interval
    assert refresh(sandbox, alice.refresh_token).status_code == 401
    assert sandbox.violations()["by_kind"]["refresh_token_reuse"] == 1


def test_reading_b_still_revokes_outside_the_interval_or_once_the_successor_was_used(
    alice: Api, sandbox: SandboxProcess
) -> None:
    sandbox.readings(refresh_reuse="B")
    # The successor presented: the spent token is a reuse, interval or not
    second = refresh(sandbox, alice.refresh_token)
    assert refresh(sandbox, second.json()["refresh_token"]).status_code == 200
    assert refresh(sandbox, alice.refresh_token).status_code == 401
    assert sandbox.violations()["by_kind"]["refresh_token_reuse"] == 1
    assert sandbox.state()["counters"]["refresh_regrant"] == 0


def test_reading_b_revokes_after_the_interval(bob: Api, sandbox: SandboxProcess) -> None:
    sandbox.readings(refresh_reuse="B")
    assert refresh(sandbox, bob.refresh_token).status_code == 200
    sandbox.shift_clock(61)

    assert refresh(sandbox, bob.refresh_token).status_code == 401
    assert sandbox.violations()["by_kind"]["refresh_token_reuse"] == 1
    assert sandbox.state()["counters"]["refresh_regrant"] == 0


# -- inspection and reset ----------------------------------------------------------------


def test_violations_show_in_state_and_page_and_reset_clears_them(
    alice: Api, sandbox: SandboxProcess
) -> None:
    alice.put_order(order_body("SW-5", marketplace_state="SHIPPED"))
    refresh(sandbox, alice.refresh_token)
    refresh(sandbox, alice.refresh_token)
    report = sandbox.violations()
    assert report["total"] == 2
    assert report["by_kind"] == {
        "early_retry": 0,
        "shipped_while_unfulfilled": 1,
        "refresh_token_reuse": 1,
        "api_token_headers": 0,
        "edrts_reset_window": 0,
        "edrts_record_over_5kb": 0,
        "edrts_marketplace_created_product": 0,
        "return_complete_not_refunded": 0,
        "complete_and_errors": 0,
        "return_changed_after_authorization": 0,
        "complete_unread": 0,
        "after_sale_query": 0,
        "return_without_order_number": 0,
        "refund_errors_after_correction": 0,
        "date_format": 0,
        "order_numbers_over_page": 0,
        "content_query": 0,
    }
    assert [v["kind"] for v in report["recent"]] == [
        "refresh_token_reuse",
        "shipped_while_unfulfilled",
    ]
    assert sandbox.state()["violations"]["total"] == 2
    page = requests.get(sandbox.base_url + "/sandbox/", timeout=5).text
    assert "2 violations" in page
    assert "order SW-5 SHIPPED with lines" in page

    sandbox.reset()

    assert sandbox.violations()["total"] == 0
    assert sandbox.violations()["recent"] == []
    assert sandbox.state()["retry_grace_seconds"] == 0.4
    assert set(sandbox.state()["readings"].values()) == {"A"}
    assert "0 violations" in requests.get(sandbox.base_url + "/sandbox/", timeout=5).text


def test_a_wait_does_not_outlive_a_reset(alice: Api, sandbox: SandboxProcess) -> None:
    sandbox.set_faults(endpoint="list_orders", kind="429", count=1, retry_after=60)
    assert alice.call("GET", "/orders").status_code == 429
    sandbox.reset(keep_accounts=True)
    sandbox.set_retry_grace(0)
    fresh = sandbox.mint_tokens("mp-test", "alice")["access_token"]
    headers = {"Authorization": f"Bearer {fresh}"}
    assert requests.get(sandbox.api_url + "/orders", headers=headers, timeout=5).ok
    assert sandbox.violations()["total"] == 0
