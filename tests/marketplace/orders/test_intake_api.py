"""The intake API: auth, validation (400 with per-field errors), transitions (409),
idempotent creates, reads, the OpenAPI document and the management commands."""

from __future__ import annotations

import json
import re
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
    # A second cancel is 409, as the README says (a second run of its commands).
    again = post(api, f"{URL}/MP-1001/cancel")
    assert again.status_code == 409
    assert again.json()["detail"] == "the order is already CANCELLED"
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


# --- hardening: what reaches the database, the platform's URLs and the document ------


def _rejected(response: Any, field: str) -> None:
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"], response.json()
    assert not Order.objects.exists()


@pytest.mark.parametrize(
    "number", [".", "..", "a/b", "a\\b", "a?b", "a#b", "a%2Fb", "a b", "a\tb", "-a", "é", ""]
)
def test_order_and_line_numbers_that_are_not_one_path_segment_are_400(
    api: Client, seller: Any, number: str
) -> None:
    # Given a number that could name another URL than /orders/{number} at the platform
    # When it comes in as the order number, or as a line number
    # Then the body is refused naming that field, and nothing is stored
    _rejected(post(api, URL, order_body(number)), "mp_order_number")
    body = order_body()
    body["order_lines"][0]["mp_line_number"] = number
    _rejected(post(api, URL, body), "order_lines.0.mp_line_number")


def test_a_control_character_in_an_order_number_path_is_400_not_500(api: Client) -> None:
    for path in ("%00", "MP%00-1", "..%0A"):
        response = api.get(f"{URL}/{path}")
        assert response.status_code == 400, (path, response.content)
        assert "mp_order_number" in response.json()["fields"]
    assert post(api, f"{URL}/MP%001/cancel").status_code == 400


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("customer.full_name", "Ada\x00Lovelace"),
        ("shipping_address.city", "Lon\x1bdon"),
        ("sales_channel", "EU\x7f"),
        ("location", "shelf\x85"),
        ("order_lines.0.sku", "SKU\x00"),
        ("order_lines.0.product_name", "Red\tmug"),
        ("order_lines.0.taxes.0.type", "V\x00AT"),
        ("delivery_notes", "porter\x00"),
        ("customer.full_name", "\ud800"),  # a lone surrogate: not text Postgres can store
    ],
)
def test_a_control_character_in_any_text_is_400_naming_the_field(
    api: Client, seller: Any, path: str, value: str
) -> None:
    # Given a valid body with one control character in one string
    body = order_body()
    target: Any = body
    *parents, leaf = path.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[leaf] = value
    # When it is posted, then it is refused naming that field (not a 500 from Postgres)
    _rejected(post(api, URL, body), path)


def test_delivery_notes_may_hold_lines_and_tabs(
    api: Client, seller: Any, quiet_broker: Any
) -> None:
    notes = "Ring twice.\r\n\tThen leave it with the porter."
    response = post(api, URL, order_body(delivery_notes=notes))
    assert response.status_code == 201, response.content
    assert Order.objects.get().delivery_notes == notes


def test_a_body_over_the_size_limit_is_413_in_the_api_error_shape(
    api: Client, seller: Any, settings: Any
) -> None:
    body = order_body(delivery_notes="x" * 1000)
    raw = json.dumps(body)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(raw) - 1
    response = api.post(URL, data=raw, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {
        "detail": f"request body larger than {len(raw) - 1} bytes",
        "fields": {},
    }
    assert not Order.objects.exists()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("currency", "AAA"),
        ("currency", "eur"),
        ("shipping_address.country_code", "AAA"),
        ("shipping_address.country_code", "gbr"),
        ("shipping_address.country_code_iso2", "QQ"),
    ],
)
def test_currency_and_country_codes_must_be_iso_codes(
    api: Client, seller: Any, path: str, value: str
) -> None:
    body = order_body()
    if "." in path:
        parent, leaf = path.split(".")
        body[parent][leaf] = value
    else:
        body[path] = value
    _rejected(post(api, URL, body), path)


@pytest.mark.parametrize(
    ("currency", "field", "value"),
    [
        ("JPY", "order_lines.1.unit_price", "1200.50"),
        ("JPY", "order_lines.0.taxes.0.amount", "2.50"),
        ("JPY", "order_lines.0.discounts.0.amount", "1.5"),
    ],
)
def test_an_amount_finer_than_the_currencys_unit_is_refused_never_rounded(
    api: Client, seller: Any, currency: str, field: str, value: str
) -> None:
    body = order_body(currency=currency)
    whole = {"unit_price": "1250", "shipping_price": "400"}
    body["order_lines"][0].update(whole, taxes=[{"type": "VAT", "amount": "250"}])
    body["order_lines"][0]["discounts"] = [{"name": "spring", "amount": "100", "type": "fixed"}]
    body["order_lines"][1]["unit_price"] = "999"
    line, *rest = field.removeprefix("order_lines.").split(".")
    target: Any = body["order_lines"][int(line)]
    for key in rest[:-1]:
        target = target[int(key)] if key.isdigit() else target[key]
    target[rest[-1]] = value

    response = post(api, URL, body)

    _rejected(response, field)
    assert "JPY amounts have at most 0 decimals" in response.json()["fields"][field][0]


def test_whole_yen_is_accepted(api: Client, seller: Any, quiet_broker: Any) -> None:
    body = order_body(currency="JPY")
    body["order_lines"][0].update(unit_price="1250", shipping_price="400.00")
    body["order_lines"][0]["taxes"] = [{"type": "VAT", "amount": "250"}]
    body["order_lines"][0]["discounts"] = []
    body["order_lines"][1]["unit_price"] = "999"
    response = post(api, URL, body)
    assert response.status_code == 201, response.content
    assert Order.objects.get().currency == "JPY"


@pytest.mark.parametrize("quantity", [True, "1", 1.5, 0, None])
def test_quantity_must_be_a_json_integer(api: Client, seller: Any, quantity: Any) -> None:
    body = order_body()
    body["order_lines"][0]["quantity"] = quantity
    _rejected(post(api, URL, body), "order_lines.0.quantity")


def test_a_whole_json_number_is_an_integer_quantity(
    api: Client, seller: Any, quiet_broker: Any
) -> None:
    # JSON Schema's "integer" includes 2.0; the document says integer, so it is accepted.
    body = order_body()
    body["order_lines"][0]["quantity"] = 2.0
    assert post(api, URL, body).status_code == 201
    assert Order.objects.get().lines.get(mp_line_number="1").quantity == 2


@pytest.mark.parametrize("price", [12.5, 12, True, "12.345", "-1.00", "1e3", " 12.50", "1,50"])
def test_money_must_be_a_decimal_string_with_at_most_two_decimals(
    api: Client, seller: Any, price: Any
) -> None:
    body = order_body()
    body["order_lines"][0]["unit_price"] = price
    body["order_lines"][0]["taxes"][0]["amount"] = price
    response = post(api, URL, body)
    _rejected(response, "order_lines.0.unit_price")
    assert "order_lines.0.taxes.0.amount" in response.json()["fields"]


def test_the_openapi_document_states_the_rules_the_validator_applies(api: Client) -> None:
    schemas = Client().get("/api/intake/openapi.json").json()["components"]["schemas"]
    order, line = schemas["OrderIn"], schemas["OrderLineIn"]
    assert "EUR" in order["properties"]["currency"]["enum"]
    assert "AAA" not in order["properties"]["currency"]["enum"]
    country = schemas["AddressIn"]["properties"]["country_code"]
    assert "GBR" in country["enum"]
    assert "AAA" not in country["enum"]
    assert line["properties"]["quantity"] == {
        "maximum": 100000, "minimum": 1, "title": "Quantity", "type": "integer"
    }  # fmt: skip
    price = line["properties"]["unit_price"]
    assert price["type"] == "string"
    assert price["pattern"] == r"^[0-9]{1,10}(\.[0-9]{1,2})?$"
    assert order["properties"]["mp_order_number"]["pattern"] == r"^[A-Za-z0-9][A-Za-z0-9._~-]*$"
    assert r"\u0000" in order["properties"]["sales_channel"]["pattern"]
    assert set(order["required"]) >= {
        "mp_order_number", "seller", "sales_channel", "purchase_date", "currency",
        "customer", "shipping_address", "order_lines",
    }  # fmt: skip
    assert order["additionalProperties"] is False


# --- every error is JSON {"detail", "fields"}; Unicode format characters; non-currencies ---


def _error_shape(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    data = response.json()
    assert set(data) == {"detail", "fields"}, data
    assert isinstance(data["detail"], str)
    assert data["detail"]
    assert isinstance(data["fields"], dict)
    return data


def test_every_intake_error_is_json_with_detail_and_fields(
    api: Client, seller: Any, api_key: str, quiet_broker: Any
) -> None:
    # 401: no key, a wrong key
    _error_shape(post(Client(), URL, order_body()), 401)
    _error_shape(Client(headers={"X-API-Key": "mpk_nope"}).get(f"{URL}/MP-1"), 401)
    # 404: an unknown order, a path with an encoded slash, a path no route has
    _error_shape(api.get(f"{URL}/MP-404"), 404)
    _error_shape(api.get(f"{URL}/a%2Fb"), 404)
    _error_shape(api.get("/api/intake/nothing-here"), 404)
    _error_shape(Client().get("/api/intake/orders/a/b/c"), 404)
    # 405: a method the path does not take, with the Allow header kept
    not_allowed = api.put(URL, data="{}", content_type="application/json")
    _error_shape(not_allowed, 405)
    assert "POST" in not_allowed["Allow"]
    _error_shape(api.delete(f"{URL}/MP-1"), 405)
    # 400: a body that is not JSON names the body
    unparsable = api.post(URL, data="{not json", content_type="application/json")
    assert _error_shape(unparsable, 400)["fields"] == {"body": ["must be a JSON object"]}
    # 409: an illegal transition
    assert post(api, URL, order_body()).status_code == 201
    _error_shape(post(api, f"{URL}/MP-1001/state", {"state": "PENDING"}), 409)
    assert Order.objects.count() == 1


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("customer.full_name", "\u200b\u200b\u200b"),  # only zero-width spaces
        ("customer.full_name", "\u200d\ufeff"),  # a zero-width joiner and a BOM
        ("order_lines.0.sku", "SKU-\u202e1-A"),  # a right-to-left override
        ("order_lines.0.sku", "SKU\u2066-1\u2069"),  # bidi isolates
        ("order_lines.0.product_name", "Red mug\u2028large"),  # line separator (Zl)
        ("shipping_address.city", "Lon\u2029don"),  # paragraph separator (Zp)
        ("sales_channel", "EU\u00ad"),  # soft hyphen (Cf)
        ("customer.full_name", "Ada \U000e0041"),  # a tag character (Cf above U+FFFF)
        ("delivery_notes", "porter\u2028"),  # notes keep tab and line breaks only
        ("delivery_notes", "left\u202e"),
    ],
)
def test_format_and_separator_characters_are_refused_like_control_characters(
    api: Client, seller: Any, path: str, value: str
) -> None:
    body = order_body()
    target: Any = body
    *parents, leaf = path.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[leaf] = value
    response = post(api, URL, body)
    _rejected(response, path)
    assert "format or separator characters" in response.json()["fields"][path][0]


def test_ordinary_letters_marks_and_emoji_are_still_text(
    api: Client, seller: Any, quiet_broker: Any
) -> None:
    # Accents, non-Latin scripts, combining marks and an emoji (above U+FFFF) stay allowed
    body = order_body()
    body["customer"]["full_name"] = "Zoë Ŝmith 山田 अनु e\u0301 \U0001f600"
    body["order_lines"][0]["product_name"] = "Mug \u00abRouge\u00bb"
    response = post(api, URL, body)
    assert response.status_code == 201, response.content
    assert Order.objects.get().customer_full_name == body["customer"]["full_name"]


@pytest.mark.parametrize(
    "code", ["XXX", "XTS", "XAU", "XAG", "XPT", "XPD", "XDR", "XBA", "XSU", "XUA", "BOV", "USN"]
)
def test_iso_4217_codes_that_are_not_currencies_are_refused(
    api: Client, seller: Any, code: str
) -> None:
    response = post(api, URL, order_body(currency=code))
    _rejected(response, "currency")
    assert response.json()["fields"]["currency"] == ["must be an ISO 4217 currency code"]


def test_the_openapi_document_states_the_unicode_and_currency_rules(api: Client) -> None:
    document = Client().get("/api/intake/openapi.json").json()
    schemas = document["components"]["schemas"]
    order = schemas["OrderIn"]
    currency = order["properties"]["currency"]
    assert "EUR" in currency["enum"]
    for code in ("XXX", "XTS", "XAU", "XDR", "BOV"):
        assert code not in currency["enum"]
    assert "XXX" in currency["description"]
    sales_channel = order["properties"]["sales_channel"]
    # The document's pattern (read as a regex, as a client would) refuses them too
    pattern = re.compile(sales_channel["pattern"])
    assert pattern.fullmatch("EU web shop é 山")
    for char in ("\x00", "\u200b", "\u202e", "\u2028", "\u2029", "\ufeff", "\u00ad"):
        assert pattern.fullmatch(f"EU{char}") is None, repr(char)
    assert "format (Cf" in sales_channel["description"]
    notes = order["properties"]["delivery_notes"]
    assert "Tab, line feed and carriage return are allowed" in str(notes)
    assert "405 a method" in document["info"]["description"]
