"""The intake API's examples: the OpenAPI document's example body is a realistic order
(not text Swagger UI makes up from the patterns), the same as the README's
docs/examples/order.json, and valid; ``create_api_key`` prints a key a shell can capture."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from marketplace.orders.intake_schema import ORDER_EXAMPLE, STATE_EXAMPLE, OrderIn
from marketplace.orders.models import ApiKey, Order
from tests.support.factories import SellerFactory

REPO = Path(__file__).resolve().parents[3]
EXAMPLE_FILE = REPO / "docs" / "examples" / "order.json"
pytestmark = pytest.mark.django_db


def test_the_readmes_order_file_is_the_documents_example() -> None:
    assert json.loads(EXAMPLE_FILE.read_text(encoding="utf-8")) == ORDER_EXAMPLE
    assert "docs/examples/order.json" in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_openapi_document_carries_the_realistic_examples() -> None:
    document = Client().get("/api/intake/openapi.json").json()
    create = document["paths"]["/api/intake/orders"]["post"]["requestBody"]["content"]
    assert create["application/json"]["example"] == ORDER_EXAMPLE
    assert create["application/json"]["schema"] == {"$ref": "#/components/schemas/OrderIn"}
    assert document["components"]["schemas"]["OrderIn"]["examples"] == [ORDER_EXAMPLE]
    state = document["paths"]["/api/intake/orders/{mp_order_number}/state"]["post"]
    assert state["requestBody"]["content"]["application/json"]["example"] == STATE_EXAMPLE
    # the example is consistent: currency, country and its two codes agree
    address = ORDER_EXAMPLE["shipping_address"]
    assert (ORDER_EXAMPLE["currency"], address["country_code"], address["country_code_iso2"]) == (
        "EUR",
        "DEU",
        "DE",
    )


def test_the_example_is_accepted_by_the_api_for_the_demo_seller(quiet_broker: Any) -> None:
    OrderIn.model_validate(ORDER_EXAMPLE)
    SellerFactory(username="seller")
    out = StringIO()
    call_command("create_api_key", "--name", "checkout", "--quiet", stdout=out, stderr=out)
    key = out.getvalue().strip()
    client = Client(headers={"Authorization": f"Bearer {key}"})
    body = json.dumps(ORDER_EXAMPLE)
    response = client.post("/api/intake/orders", body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert Order.objects.get().mp_order_number == ORDER_EXAMPLE["mp_order_number"]


def test_create_api_key_quiet_prints_the_key_alone_and_replace_renews_it() -> None:
    out, err = StringIO(), StringIO()
    call_command("create_api_key", "--name", "checkout", "--quiet", stdout=out, stderr=err)
    first = out.getvalue().strip()
    assert first.startswith("mpk_")
    assert "\n" not in first
    assert err.getvalue() == ""
    with pytest.raises(CommandError, match="--replace"):
        call_command("create_api_key", "--name", "checkout", stdout=StringIO(), stderr=StringIO())
    out = StringIO()
    call_command("create_api_key", "--name", "checkout", "--replace", "--quiet", stdout=out)
    second = out.getvalue().strip()
    assert second != first
    assert ApiKey.objects.filter(name="checkout").count() == 1
    client = Client(headers={"Authorization": f"Bearer {first}"})
    assert client.get("/api/intake/orders/X-1").status_code == 401
