"""End to end with a real Celery worker on the configured broker and the sandbox process.

Intake goes through the HTTP API; the worker pushes; the sandbox's simulated seller
ships; a pull stores, settles and pushes SHIPPED. Every wait is bounded.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from marketplace.orders.models import Order, OrderSync, SyncEvent
from marketplace.orders.services import outbox
from marketplace.orders.services.intake import order_state_change
from marketplace.orders.services.push_recovery import order_sync_sweep
from marketplace.sync.fan_out import sellers_pull_fan_out
from tests.marketplace.conftest import order_body, wait_for
from tests.support.app_fixtures import PLATFORM_SELLER, Platform
from tests.support.sandbox_process import SandboxError

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
URL = "/api/intake/orders"
ORDER_OF_STATES = ["PENDING", "AWAITING_SHIPMENT", "SHIPPED", "CANCELLED"]


@pytest.fixture(params=["strict", "additive-fields"], autouse=True)
def contract_mode(request: pytest.FixtureRequest, platform: Platform) -> Any:
    """Every test runs against the sandbox in its strict default mode (contract fields
    only) and again with unknown fields added to every answer. Either way the app must
    break none of the contract's rules: the sandbox counts zero violations."""
    if request.param == "additive-fields":
        platform.sandbox.set_additive_fields(True)
    yield request.param
    violations = platform.sandbox.violations()
    assert violations["total"] == 0, violations


def post(api: Client, url: str, body: Any = None) -> Any:
    response = api.post(url, data=json.dumps(body or {}), content_type="application/json")
    assert response.status_code in (200, 201), response.content
    return response


def remote_state(platform: Platform, number: str) -> str | None:
    """The order's state at the platform, or ``None`` when the sandbox really has no such
    order (its 404 ``not_found``). Any other answer raises: an erring sandbox must fail the
    test, not pass for "the order never arrived"."""
    sandbox = platform.sandbox
    response = sandbox.http.get(f"{sandbox.control_url}/orders/{number}", timeout=30)
    if (
        response.status_code == 404
        and response.headers.get("Content-Type", "").startswith("application/json")
        and response.json().get("error") == "not_found"
    ):
        return None
    if response.status_code != 200:
        raise SandboxError(f"GET /orders/{number} -> {response.status_code}: {response.text}")
    return response.json()["marketplace_state"]


def sync_story(number: str) -> str:
    """The order's outbox row and history, for a failure message."""
    sync = OrderSync.objects.select_related("order__seller__connection").get(
        order__mp_order_number=number
    )
    events = SyncEvent.objects.filter(order_id=sync.order_id).order_by("created_at", "id")
    lines = [
        f"sync: status={sync.status} desired={sync.desired_version} "
        f"pushed={sync.pushed_version} claim={bool(sync.claim_token)} "
        f"next={sync.next_attempt_at} error={sync.last_error!r}",
        f"connection: {sync.order.seller.connection.state}",
    ]
    lines += [f"  {e.created_at:%H:%M:%S.%f} {e.kind} v{e.version} {e.message}" for e in events]
    return "\n".join(lines)


def synced(number: str) -> bool:
    sync = OrderSync.objects.filter(order__mp_order_number=number).first()
    return bool(sync and sync.status == "synced")


def assert_history_monotonic(platform: Platform, number: str) -> list[str]:
    history = [h["state"] for h in platform.order(number)["state_history"]]
    ranks = [ORDER_OF_STATES.index(s) for s in history]
    assert ranks == sorted(ranks), history  # never backwards
    assert len(set(history)) == len(history), history  # never the same state twice
    return history


def test_intake_state_change_and_cancellation_reach_the_platform(
    platform: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    post(api, URL, order_body("MP-E1", marketplace_state="PENDING"))
    wait_for(lambda: synced("MP-E1"), what="the first push")
    assert remote_state(platform, "MP-E1") == "PENDING"
    placed = platform.order("MP-E1")["placed"]
    assert placed["customer"]["full_name"] == "Ada Lovelace"
    assert len(placed["order_lines"]) == 2

    post(api, f"{URL}/MP-E1/state", {"state": "AWAITING_SHIPMENT"})
    wait_for(lambda: remote_state(platform, "MP-E1") == "AWAITING_SHIPMENT", what="state")
    post(api, f"{URL}/MP-E1/cancel")
    wait_for(lambda: remote_state(platform, "MP-E1") == "CANCELLED", what="cancellation")
    wait_for(lambda: synced("MP-E1"), what="synced")
    assert assert_history_monotonic(platform, "MP-E1") == [
        "PENDING", "AWAITING_SHIPMENT", "CANCELLED"
    ]  # fmt: skip


def test_seller_ships_and_the_pull_settles_and_pushes_shipped(
    platform: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    post(api, URL, order_body("MP-E2"))
    wait_for(lambda: synced("MP-E2"), what="placement")
    platform.sandbox.ship("MP-E2", split=2)
    assert sellers_pull_fan_out() == [connected_seller.id]
    wait_for(lambda: remote_state(platform, "MP-E2") == "SHIPPED", what="SHIPPED at the platform")
    order = Order.objects.get(mp_order_number="MP-E2")
    assert order.state == "SHIPPED"
    wait_for(lambda: synced("MP-E2"), what="synced")
    assert assert_history_monotonic(platform, "MP-E2") == ["AWAITING_SHIPMENT", "SHIPPED"]


def test_injected_faults_are_retried_until_synced(
    platform: Platform, connected_seller: Any, api: Client, worker: Any, settings: Any
) -> None:
    settings.PLATFORM_READ_TIMEOUT = 0.5
    platform.sandbox.set_faults(
        {"endpoint": "put_order", "kind": "429", "count": 1, "retry_after": 1},
        {"endpoint": "put_order", "kind": "500", "count": 1},
        {"endpoint": "put_order", "kind": "malformed_json", "count": 1},
        {"endpoint": "put_order", "kind": "hang", "count": 1, "hang_seconds": 1.5},
    )
    numbers = [f"MP-E3-{i}" for i in range(4)]
    for number in numbers:
        post(api, URL, order_body(number))
    wait_for(lambda: all(synced(n) for n in numbers), timeout=40, what="all synced")
    for number in numbers:
        assert remote_state(platform, number) == "AWAITING_SHIPMENT"
    faults = [r["fault"] for r in platform.requests(endpoint="put_order") if r.get("fault")]
    assert len(faults) >= 3  # the hang may not be logged as answered


def test_a_lost_wake_up_is_recovered_by_the_sweeper_without_double_pushes(
    platform: Platform, connected_seller: Any, api: Client, worker: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    with monkeypatch.context() as patch:
        patch.setattr(outbox, "push_enqueue", lambda **kwargs: None)  # the broker "loses" it
        post(api, URL, order_body("MP-E4", marketplace_state="PENDING"))
        order_state_change(mp_order_number="MP-E4", state="AWAITING_SHIPMENT")
    assert remote_state(platform, "MP-E4") is None
    # The sweeper rings the drain (test_push checks that it does, with a quiet broker;
    # here any drain running meanwhile may take the order first, which is just as good).
    order_sync_sweep()
    wait_for(lambda: synced("MP-E4"), what="the sweeper's push")
    for _ in range(3):
        order_sync_sweep()  # nothing is due any more: no second push
    assert assert_history_monotonic(platform, "MP-E4") == ["AWAITING_SHIPMENT"]
    assert len(platform.requests(endpoint="put_order")) == 1


def test_rapid_changes_and_sweeps_never_push_out_of_order(
    platform: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    numbers = [f"MP-E5-{i}" for i in range(6)]
    for number in numbers:
        post(api, URL, order_body(number, marketplace_state="PENDING"))
    for number in numbers:
        order_state_change(mp_order_number=number, state="AWAITING_SHIPMENT")
        order_sync_sweep()
    for number in numbers[::2]:
        order_state_change(mp_order_number=number, state="CANCELLED")
        order_sync_sweep()
    wait_for(lambda: all(synced(n) for n in numbers), timeout=40, what="all synced")
    for i, number in enumerate(numbers):
        history = assert_history_monotonic(platform, number)
        assert history[-1] == ("CANCELLED" if i % 2 == 0 else "AWAITING_SHIPMENT")


def test_revoked_grant_orders_wait_and_go_out_after_reconnect(
    platform: Platform, connected_seller: Any, api: Client, worker: Any
) -> None:
    platform.sandbox.revoke(PLATFORM_SELLER)
    platform.sandbox.expire_tokens(PLATFORM_SELLER)
    post(api, URL, order_body("MP-E6"))
    wait_for(
        lambda: OrderSync.objects.filter(status="waiting_for_connection").exists(),
        what="waiting_for_connection",
    )
    assert remote_state(platform, "MP-E6") is None
    platform.reconnect(connected_seller)
    sellers_pull_fan_out()  # beat's tick: the sync starts the seller, releasing the order
    wait_for(
        lambda: synced("MP-E6"),
        what="push after reconnect",
        explain=lambda: sync_story("MP-E6"),
    )
    assert remote_state(platform, "MP-E6") == "AWAITING_SHIPMENT"


def test_concurrent_pushes_of_one_order_make_one_call(
    platform: Platform, connected_seller: Any, api: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from django.db import connection

    from marketplace.orders.services.push import order_push

    with monkeypatch.context() as patch:
        patch.setattr(outbox, "push_enqueue", lambda **kwargs: None)
        post(api, URL, order_body("MP-E7"))
    platform.sandbox.set_faults(endpoint="put_order", kind="latency", latency_ms=300)
    order_id = Order.objects.get(mp_order_number="MP-E7").id
    results: list[str] = []

    def push() -> None:
        try:
            results.append(order_push(order_id=order_id))
        finally:
            connection.close()

    threads = [threading.Thread(target=push) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(results) == ["skipped"] * 5 + ["synced"]
    assert len(platform.requests(endpoint="put_order")) == 1
