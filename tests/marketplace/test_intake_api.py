"""The intake API: auth, validation (400 with per-field errors), transitions (409),
idempotent creates, reads, the OpenAPI document and the management commands."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from marketplace.orders.models import ApiKey, Order, OrderSync, SyncEvent
from marketplace.orders.services.api_keys import api_key_hash
from tests.marketplace.conftest import BrokerRecorder, order_body

pytestmark = pytest.mark.django_db
URL = "/api/intake/orders"


def post(api: Client, url: str, body: Any = None) -> Any:
    return api.post(url, data=json.dumps(body or {}), content_type="application/json")


def test_no_key_or_a_wrong_key_is_401(seller: Any, api_key: str) -> None:
    anonymous = Client()
    assert post(anonymous, URL, order_body()).status_code == 401
    wrong = Client(headers={"Authorization": "Bearer mpk_not-a-key"})
    assert post(wrong, URL, order_body()).status_code == 401
    assert anonymous.get(f"{URL}/MP-1001").status_code == 401
    assert not Order.objects.exists()


def test_x_api_key_header_works_too(seller: Any, api_key: str, quiet_broker: Any) -> None:
    client = Client(headers={"X-API-Key": api_key})
    assert post(client, URL, order_body()).status_code == 201


def test_create_stores_the_order_its_outbox_row_and_queues_a_push(
    api: Client, seller: Any, quiet_broker: BrokerRecorder,
    django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        response = post(api, URL, order_body())
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["mp_order_number"] == "MP-1001"
    assert data["seller"] == "alice"
    assert data["marketplace_state"] == "AWAITING_SHIPMENT"
    assert data["sync"]["status"] == "pending"
    assert [line["mp_line_number"] for line in data["order_lines"]] == ["1", "2"]
    order = Order.objects.get()
    assert order.sync.desired_version == 1
    assert order.sync.pushed_version == 0
    assert SyncEvent.objects.filter(order=order, kind="queued").count() == 1
    assert quiet_broker.pushes == [(order.id, None)]


def test_bad_input_is_400_with_field_errors_and_nothing_stored(api: Client, seller: Any) -> None:
    body = order_body(currency="euro", purchase_date="yesterday")
    body["customer"].pop("full_name")
    body["order_lines"][0]["quantity"] = 0
    body["surprise"] = 1
    response = post(api, URL, body)
    assert response.status_code == 400
    fields = response.json()["fields"]
    assert {
        "currency",
        "purchase_date",
        "customer.full_name",
        "order_lines.0.quantity",
        "surprise",
    } <= set(fields)
    assert not Order.objects.exists()
    assert not OrderSync.objects.exists()


def test_rules_across_fields_and_unknown_seller_are_400(api: Client, seller: Any) -> None:
    body = order_body()
    body["order_lines"][1]["mp_line_number"] = "1"
    response = post(api, URL, body)
    assert response.status_code == 400
    assert "order_lines.1.mp_line_number" in response.json()["fields"]
    response = post(api, URL, order_body(seller="nobody"))
    assert response.status_code == 400
    assert "seller" in response.json()["fields"]
    assert post(api, URL, [1, 2]).status_code == 400
    assert not Order.objects.exists()


def test_same_body_twice_is_idempotent_and_a_different_body_is_409(
    api: Client, seller: Any, quiet_broker: Any
) -> None:
    original = order_body()
    first = post(api, URL, original)
    again = post(api, URL, original)
    # Same content, differently formatted numbers and key order: still the same order.
    body = json.loads(json.dumps(original))
    body["order_lines"][0]["unit_price"] = "12.5"
    body = dict(reversed(list(body.items())))
    third = post(api, URL, body)
    assert first.status_code == 201
    assert again.status_code == 200
    assert third.status_code == 200
    assert again.json()["mp_order_number"] == "MP-1001"
    response = post(api, URL, original | {"sales_channel": "US"})
    assert response.status_code == 409
    assert Order.objects.count() == 1
    assert OrderSync.objects.get().desired_version == 1


def test_state_changes_follow_the_legal_transitions(
    api: Client, seller: Any, quiet_broker: Any
) -> None:
    post(api, URL, order_body(marketplace_state="PENDING"))
    url = f"{URL}/MP-1001/state"
    assert post(api, url, {"state": "SHIPPED"}).status_code == 409  # settlement only
    response = post(api, url, {"state": "AWAITING_SHIPMENT"})
    assert response.status_code == 200
    assert response.json()["marketplace_state"] == "AWAITING_SHIPMENT"
    assert response.json()["sync"]["desired_version"] == 2
    assert post(api, url, {"state": "AWAITING_SHIPMENT"}).json()["sync"]["desired_version"] == 2
    assert post(api, url, {"state": "PENDING"}).status_code == 409
    assert post(api, url, {"state": "LOST"}).status_code == 400
    cancelled = post(api, f"{URL}/MP-1001/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["marketplace_state"] == "CANCELLED"
    assert post(api, url, {"state": "AWAITING_SHIPMENT"}).status_code == 409
    assert post(api, f"{URL}/NOPE/cancel").status_code == 404


def test_get_returns_the_order_or_404(api: Client, seller: Any, quiet_broker: Any) -> None:
    post(api, URL, order_body())
    response = api.get(f"{URL}/MP-1001")
    assert response.status_code == 200
    assert response.json()["customer"]["email"] == "ada@example.com"
    assert api.get(f"{URL}/MP-404").status_code == 404


def test_openapi_document_is_served_with_the_paths(api: Client) -> None:
    response = Client().get("/api/intake/openapi.json")
    assert response.status_code == 200
    document = json.loads(response.content)
    assert document["openapi"].startswith("3.")
    paths = document["paths"]
    assert "/api/intake/orders" in paths
    assert "/api/intake/orders/{mp_order_number}/state" in paths
    assert "/api/intake/orders/{mp_order_number}/cancel" in paths
    assert Client().get("/api/intake/docs").status_code == 200


def test_create_api_key_prints_the_key_once_and_stores_its_hash() -> None:
    out = StringIO()
    call_command("create_api_key", "--name", "erp", stdout=out, stderr=StringIO())
    raw_key = out.getvalue().strip()
    key = ApiKey.objects.get(name="erp")
    assert key.key_hash == api_key_hash(raw_key)
    assert raw_key not in (key.key_hash, key.prefix)
    client = Client(headers={"Authorization": f"Bearer {raw_key}"})
    assert client.get(f"{URL}/MP-1").status_code == 404  # authenticated, just unknown


def test_demo_orders_creates_orders_through_intake(seller: Any, quiet_broker: Any) -> None:
    call_command("demo_orders", "--seller", "alice", "--count", "5", "--seed", "1",
                 stdout=StringIO(), stderr=StringIO())  # fmt: skip
    assert Order.objects.filter(seller=seller).count() == 5
    assert OrderSync.objects.filter(status="pending").count() == 5
