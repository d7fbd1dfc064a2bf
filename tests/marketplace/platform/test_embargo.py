"""A 429/503 with a wait holds every call for that seller: across batches, pulls, workers."""

from __future__ import annotations

import time
from typing import Any

import pytest

from marketplace.orders.models import OrderSync
from marketplace.orders.services.push import order_push, orders_push_drain
from marketplace.platform.embargo import embargo_remaining, embargo_set, seller_holder
from marketplace.platform.errors import PlatformRateLimited
from sellers.token_source import order_client_for
from tests.marketplace.conftest import make_order
from tests.support.app_fixtures import Platform

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["redis", "database"])
def embargo_store(request: pytest.FixtureRequest, settings: Any) -> str:
    """Both homes of the embargo: Redis when configured, the database otherwise."""
    if request.param == "redis":
        if not settings.REDIS_URL:
            pytest.skip("REDIS_URL is not set")
        from marketplace.redis_client import redis_client

        for key in redis_client().scan_iter("embargo:*"):
            redis_client().delete(key)
    else:
        settings.REDIS_URL = ""
    return request.param


def test_an_embargo_only_ever_grows(embargo_store: str, seller: Any) -> None:
    assert embargo_remaining(holder=seller_holder(seller.id)) == 0
    embargo_set(holder=seller_holder(seller.id), seconds=3)
    embargo_set(holder=seller_holder(seller.id), seconds=0.5)  # a shorter wait does not cut it
    assert 2.5 < embargo_remaining(holder=seller_holder(seller.id)) <= 3.01
    embargo_set(holder=seller_holder(seller.id), seconds=5)
    assert 4.5 < embargo_remaining(holder=seller_holder(seller.id)) <= 5.01


def test_a_redis_restart_does_not_forget_a_wait_the_platform_asked_for(
    settings: Any, seller: Any
) -> None:
    if not settings.REDIS_URL:
        pytest.skip("REDIS_URL is not set")
    from marketplace.redis_client import redis_client

    holder = seller_holder(seller.id)
    embargo_set(holder=holder, seconds=3)
    # The broker's Redis restarts without persistence (the soak's incident): keys gone.
    for key in redis_client().scan_iter("embargo*"):
        redis_client().delete(key)

    assert 2.5 < embargo_remaining(holder=holder) <= 3.01  # restored from the database
    assert redis_client().exists(f"embargo:{holder}")  # and back in Redis for the others


def puts(platform: Platform) -> list[dict[str, Any]]:
    return platform.requests(endpoint="put_order")


def test_after_a_429_no_call_for_that_seller_is_sent_until_retry_after_has_passed(
    embargo_store: str, platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    first, second = make_order("MP-E1"), make_order("MP-E2")
    platform.sandbox.set_faults(endpoint="put_order", kind="429", count=1, retry_after=2)
    assert order_push(order_id=first.id) == "retrying"
    refused_at = time.monotonic()
    sent = len(puts(platform))

    # Another batch (a drain, as another worker would run it) holds the seller's orders
    # without calling, and schedules them for when the wait is over.
    orders_push_drain(seconds=5)
    assert len(puts(platform)) == sent
    for order in (first, second):
        sync = OrderSync.objects.get(order=order)
        assert sync.status == "retrying"
        assert sync.next_attempt_at is not None
    # A pull for the same seller waits too (its client may sleep out a short hold only).
    client = order_client_for(connected_seller.connection)
    with pytest.raises(PlatformRateLimited) as held:
        client.list_orders(page_size=10)
    assert held.value.code == "held"
    assert platform.requests(endpoint="list_orders") == []

    patient = order_client_for(connected_seller.connection, hold_wait=3)
    patient.list_orders(page_size=10)
    assert time.monotonic() - refused_at >= 1.9
    assert len(platform.requests(endpoint="list_orders")) == 1


def test_a_503_that_says_when_to_come_back_holds_the_seller_too(
    embargo_store: str, platform: Platform, connected_seller: Any, quiet_broker: Any
) -> None:
    order = make_order("MP-E3")
    platform.sandbox.set_faults(endpoint="put_order", kind="503", count=1, retry_after=2)
    assert order_push(order_id=order.id) == "retrying"
    assert embargo_remaining(holder=seller_holder(connected_seller.id)) > 1.5
    sync = OrderSync.objects.get(order=order)
    # The backoff never brings the retry before the platform's word.
    assert (sync.next_attempt_at - sync.updated_at).total_seconds() >= 2


def test_a_retry_due_in_a_moment_is_not_due_yet(
    platform: Platform,
    connected_seller: Any,
    quiet_broker: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    order = make_order("MP-E4")
    OrderSync.objects.filter(order=order).update(
        status="retrying", next_attempt_at=timezone.now() + timedelta(milliseconds=800)
    )
    assert orders_push_drain(seconds=1) == 0
    # A wake-up that comes early (another host's clock) does not push either: it asks to
    # come back when the retry is due.
    with django_capture_on_commit_callbacks(execute=True):
        assert order_push(order_id=order.id) == "skipped"
    assert puts(platform) == []
    assert quiet_broker.pushes
    assert quiet_broker.pushes[-1][0] == order.id
    assert 0 < quiet_broker.pushes[-1][1] <= 0.8


def test_a_503_holds_the_api_user_only_for_its_retry_after_not_the_rate_window(
    tiny_platform: Any, no_embargo: None
) -> None:
    from marketplace.platform.errors import PlatformUnavailable
    from marketplace.platform.transport import ApiKeyTransport
    from tests.marketplace.platform.conftest import Answer

    window_end = str(int(time.time()) + 60)
    limits = {"Content-Type": "application/json", "X-Rate-Limit-Reset": window_end}
    transport = ApiKeyTransport(
        base_url=tiny_platform.url, token="t0ken", api_user="erp", group="edrts"
    )
    # Given a 503 carrying the rate-limit headers every answer carries, no Retry-After
    tiny_platform.answer("PUT", "/db/7", Answer(503, '{"status": "fail"}', limits))
    with pytest.raises(PlatformUnavailable):
        transport.request("PUT", "/db/7", json_body=[])
    # Then the API user is not held until the rate window ends
    assert embargo_remaining(holder=transport.holder) == 0
    # but a 503 that says when to come back holds it that long
    tiny_platform.answer(
        "PUT", "/db/7", Answer(503, '{"status": "fail"}', {**limits, "Retry-After": "5"})
    )
    with pytest.raises(PlatformUnavailable):
        transport.request("PUT", "/db/7", json_body=[])
    assert 3 < embargo_remaining(holder=transport.holder) <= 5.5


def _listening(holder: str) -> None:
    """Read once (this process keeps the answer) and wait until the listener is in."""
    from marketplace.platform.embargo_cache import CACHE

    deadline = time.monotonic() + 5
    while CACHE.remaining(holder) is None:
        assert time.monotonic() < deadline, "the embargo listener never subscribed"
        embargo_remaining(holder=holder)
        time.sleep(0.02)


def test_a_wait_another_worker_sets_reaches_this_process_copy_at_once(
    settings: Any, seller: Any
) -> None:
    if not settings.REDIS_URL:
        pytest.skip("REDIS_URL is not set")
    from marketplace.platform import embargo
    from marketplace.platform.embargo_cache import channel
    from marketplace.redis_client import redis_client

    holder = seller_holder(seller.id)
    redis_client().delete(f"embargo:{holder}")
    _listening(holder)
    assert embargo_remaining(holder=holder) == 0  # from this process's copy

    # What another worker's embargo_set does: Redis, then the announcement (this
    # process's copy is not touched directly).
    embargo._redis_set(holder, 2000)
    redis_client().publish(channel(), holder)

    deadline = time.monotonic() + 1
    while embargo_remaining(holder=holder) == 0:
        assert time.monotonic() < deadline, "the announced wait never reached the copy"
        time.sleep(0.005)
    assert 1.5 < embargo_remaining(holder=holder) <= 2.01


def test_a_read_that_raced_an_announcement_is_not_kept(settings: Any, seller: Any) -> None:
    if not settings.REDIS_URL:
        pytest.skip("REDIS_URL is not set")
    from marketplace.platform.embargo_cache import CACHE

    holder = seller_holder(seller.id)
    _listening(holder)
    other = seller_holder(seller.id + 1_000_000)
    generation = CACHE.generation()  # a read of `other` starts here …
    CACHE.forget(holder)  # … an announcement arrives while it waits for Redis …
    CACHE.keep(other, 0.0, generation)  # … so what it read is not kept
    assert CACHE.remaining(other) is None
    CACHE.keep(other, 0.0, CACHE.generation())
    assert CACHE.remaining(other) == 0


def test_without_redis_every_check_reads_the_database(settings: Any, seller: Any) -> None:
    from marketplace.platform.embargo_cache import CACHE

    settings.REDIS_URL = ""
    holder = seller_holder(seller.id)
    assert embargo_remaining(holder=holder) == 0
    assert CACHE.remaining(holder) is None  # nothing kept: no channel to hear waits on
    embargo_set(holder=holder, seconds=2)
    assert 1.5 < embargo_remaining(holder=holder) <= 2.01
