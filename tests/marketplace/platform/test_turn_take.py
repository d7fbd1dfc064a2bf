"""``ApiKeyTransport.turn_take``: a caller takes its request's turn in the budget first and
composes the request after the wait; the request then goes without a second wait, and
the one after waits its own turn."""

from __future__ import annotations

import time

import pytest

from marketplace.platform.edrts import EdrtsClient
from marketplace.platform.transport import ApiKeyTransport
from tests.marketplace.platform.conftest import Answer, TinyPlatform

pytestmark = pytest.mark.usefixtures("no_embargo")

ACCEPTED = Answer(200, '{"status": "success", "data": {"sku_count": 1}}')


def edrts_client(platform: TinyPlatform, rate_per_second: float) -> EdrtsClient:
    # A user of its own per test: the budget's key is the user's (Redis outlives tests).
    user = f"turn-user-{time.time_ns()}"
    transport = ApiKeyTransport(
        base_url=platform.url,
        token="tok-1",
        api_user=user,
        group="edrts",
        rate_per_second=rate_per_second,
    )
    return EdrtsClient(transport)


def put(client: EdrtsClient, number: int) -> float:
    started = time.monotonic()
    client.put_records(db_id="7", records=[{"id": f"SKU-{number}", "mp_status": "live"}])
    return time.monotonic() - started


def test_a_taken_turn_is_the_next_requests_own(tiny_platform: TinyPlatform) -> None:
    # Given a budget of one request every 2 s, its turn just taken
    tiny_platform.answer("PUT", "/db/7", ACCEPTED)
    client = edrts_client(tiny_platform, rate_per_second=0.5)
    taken = time.monotonic()
    assert client.turn_take() == 0

    # The request after the turn goes at once (a second turn would have waited 2 s)...
    assert put(client, 1) < 1.5
    # ...and the one after waits its own turn, 2 s after the first
    put(client, 2)
    assert time.monotonic() - taken >= 1.9
    assert len(tiny_platform.requests_to("/db/7")) == 2


def test_a_second_turn_waits_for_the_first(tiny_platform: TinyPlatform) -> None:
    tiny_platform.answer("PUT", "/db/7", ACCEPTED)
    client = edrts_client(tiny_platform, rate_per_second=1)
    taken = time.monotonic()
    assert client.turn_take() == 0

    client.turn_take()  # two callers of one user: the second waits a turn

    assert time.monotonic() - taken >= 0.95
    assert put(client, 1) < 0.9  # its request goes in the turn it waited for
    assert len(tiny_platform.requests_to("/db/7")) == 1
