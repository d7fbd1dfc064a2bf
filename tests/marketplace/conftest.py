"""Fixtures for the order sync tests: intake API keys and valid order bodies, a broker
recorder and a real worker (``platform``, ``seller`` and ``connected_seller``:
tests/support/app_fixtures.py).

The sandbox is a separate process spoken to over real HTTP. Tests that do not run a
Celery worker use ``quiet_broker``: pushes are recorded instead of sent to the broker,
and the test calls the services itself (deterministic, no waiting).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from marketplace.orders.intake_schema import OrderIn
from marketplace.orders.models import Order
from marketplace.orders.services.api_keys import api_key_create
from marketplace.orders.services.intake import order_create
from tests.support.app_fixtures import APP_SELLER


@dataclass
class BrokerRecorder:
    pushes: list[tuple[int, float | None]] = field(default_factory=list)
    drains: list[bool] = field(default_factory=list)  # each ring of the drain doorbell: force?
    pulls: list[int] = field(default_factory=list)


@pytest.fixture
def quiet_broker(monkeypatch: pytest.MonkeyPatch) -> BrokerRecorder:
    """Record wake-ups instead of sending them (tests call the services themselves)."""
    from marketplace.orders.services import outbox
    from marketplace.sync import fan_out, pull_now

    recorder = BrokerRecorder()
    monkeypatch.setattr(
        outbox,
        "push_wake",
        lambda order_id, countdown=None: recorder.pushes.append((order_id, countdown)),
    )
    monkeypatch.setattr(
        outbox.PUSH_DOORBELL, "ring", lambda force=False: recorder.drains.append(force) or True
    )

    def enqueue(name: str, *args: Any, **options: Any) -> None:
        assert name == fan_out.SELLER_PULL_TASK, name
        recorder.pulls.append(args[0])

    monkeypatch.setattr(fan_out, "task_enqueue", enqueue)
    monkeypatch.setattr(pull_now, "task_enqueue", enqueue)
    return recorder


@pytest.fixture
def api_key(db: Any) -> str:
    _, raw_key = api_key_create(name="back-office")
    return raw_key


@pytest.fixture
def api(api_key: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {api_key}"})


_BODY: dict[str, Any] = {
    "mp_order_number": "MP-1001",
    "seller": APP_SELLER,
    "marketplace_state": "AWAITING_SHIPMENT",
    "sales_channel": "EU",
    "purchase_date": "2024-04-18T10:15:00+00:00",
    "currency": "EUR",
    "location": "warehouse-1",
    "customer": {
        "full_name": "Ada Lovelace",
        "email": "ada@example.com",
        "phone": "+44 20 7946 0000",
        "vat": "GB123456789",
    },
    "shipping_address": {
        "full_name": "Ada Lovelace",
        "address1": "12 Analytical Row",
        "address2": "Flat 3",
        "city": "London",
        "state": "Greater London",
        "postal_code": "N1 9GU",
        "country_code": "GBR",
        "country_code_iso2": "GB",
        "address_type": "residential",
        "phone": "+44 20 7946 0001",
    },
    "order_lines": [
        {
            "mp_line_number": "1",
            "sku": "SKU-RED",
            "product_name": "Red mug",
            "quantity": 3,
            "unit_price": "12.50",
            "shipping_method": "standard",
            "shipping_price": "4.00",
            "taxes": [{"type": "VAT", "amount": "2.50"}],
            "discounts": [{"name": "spring", "amount": "1.00", "type": "fixed"}],
        },
        {
            "mp_line_number": "2",
            "sku": "SKU-BLUE",
            "product_name": "Blue mug",
            "quantity": 1,
            "unit_price": "9.99",
        },
    ],
    "delivery_notes": "Leave with the porter",
    "earliest_ship_date": "2024-04-18T12:00:00+00:00",
    "latest_ship_date": "2024-04-20T18:00:00+00:00",
}


def order_body(number: str = "MP-1001", **overrides: Any) -> dict[str, Any]:
    """A valid intake body; purchase date a day ago so today's shipments are valid."""
    body = copy.deepcopy(_BODY)
    purchased = datetime.now(UTC) - timedelta(days=1)
    body["purchase_date"] = purchased.isoformat()
    body["earliest_ship_date"] = (purchased + timedelta(hours=2)).isoformat()
    body["latest_ship_date"] = (purchased + timedelta(days=3)).isoformat()
    body["mp_order_number"] = number
    body.update(overrides)
    return body


def make_order(number: str = "MP-1001", **overrides: Any) -> Order:
    order, _ = order_create(data=OrderIn.model_validate(order_body(number, **overrides)))
    return order


def embargo_clear() -> None:
    """Forget every seller's embargo (tests that pretend the platform's wait is over)."""
    from django.conf import settings

    from marketplace.platform.models import HolderEmbargo

    HolderEmbargo.objects.all().delete()
    if settings.REDIS_URL:
        from marketplace.redis_client import redis_client

        for key in redis_client().scan_iter("embargo:*"):
            redis_client().delete(key)
    # And this process's copy of what it read (embargo_cache): a real wait ends by time.
    from marketplace.platform.embargo_cache import CACHE

    CACHE.forget()


def wait_for(
    condition: Callable[[], Any],
    *,
    timeout: float = 20.0,
    interval: float = 0.1,
    what: str = "",
    explain: Callable[[], str] | None = None,
) -> Any:
    """Poll until ``condition()`` is truthy; fail after ``timeout`` seconds.

    ``explain`` adds what the system looked like at the deadline to the failure.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            detail = f"\n{explain()}" if explain else ""
            pytest.fail(f"timed out after {timeout}s waiting for {what or condition}{detail}")
        time.sleep(interval)


@pytest.fixture
def worker(celery_worker_thread: Any) -> Any:
    """A real Celery worker (the transactional-db fixture comes with it)."""
    return celery_worker_thread
