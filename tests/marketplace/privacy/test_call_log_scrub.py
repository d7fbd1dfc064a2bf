"""Issue 30, point 6: the call log keeps no buyer's personal data.

Real bodies (the shapes the platform sends and takes: the returns contract's fields, an
order as the push sends it) go over a socket to a tiny platform in a thread; what the
call log stored must name none of the buyer's details, whether the body was kept as a
request (a refused call keeps it) or as an answer, and must still say what the call was.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from marketplace.log_redaction import RedactSecretsFilter, redact
from marketplace.platform.errors import PlatformRejected
from marketplace.platform.models import PlatformCall
from marketplace.platform.order_source import OrderSourceClient
from tests.marketplace.platform.conftest import Answer, TinyPlatform

pytestmark = pytest.mark.django_db

NAME = "Philippa Quenby-Marsh"
EMAIL = "philippa.qm@example.org"
PHONE = "+44 20 7946 0958"
VAT = "GB987654321"
STREET = "7 Larkspur Mews"
CITY = "Little Snoring"
POSTCODE = "NR21 0AB"
NOTES = "Door code 4471, ring twice"
REASON = "My husband Tom ordered the wrong size"
PERSONAL = (NAME, EMAIL, PHONE, VAT, STREET, CITY, POSTCODE, NOTES, REASON, "4471", "Tom")

ADDRESS = {
    "full_name": NAME,
    "address1": STREET,
    "address2": "Flat 2",
    "address3": "Rear entrance",
    "city": CITY,
    "state": "Norfolk",
    "postal_code": POSTCODE,
    "country_code": "GBR",
    "country_code_iso2": "GB",
    "address_type": "residential",
    "phone": PHONE,
}
RETURN = {
    "mp_order_number": "MP-77",
    "mp_return_number": "R-1",
    "status": "AWAITING_AUTHORIZATION",
    "rma": None,
    "notes": NOTES,
    "request_date": "2026-05-10",
    "respond_date": "2026-05-24",
    "shipping_address": ADDRESS,
    "customer_email": EMAIL,
    "return_type": "SHIP",
    "return_lines": [
        {
            "mp_return_line_number": "1",
            "mp_order_line_number": "1",
            "sku": "SKU-RED",
            "quantity": 1,
            "currency": "EUR",
            "requested_refund_principal": 12.5,
            "requested_refund_tax": 2.5,
            "reason": REASON,
            "preauthorized": False,
            "product_name": "Red mug",
            "unit_price": 12.5,
            "tax": 2.5,
        }
    ],
}
ORDER = {
    "mp_order_number": "MP-77",
    "marketplace_state": "AWAITING_SHIPMENT",
    "sales_channel": "EU",
    "currency": "EUR",
    "customer": {"full_name": NAME, "email": EMAIL, "phone": PHONE, "vat": VAT},
    "shipping_address": ADDRESS,
    "delivery_notes": NOTES,
    "order_lines": [{"mp_line_number": "1", "sku": "SKU-RED", "quantity": 1}],
}


class _Tokens:
    def access_token(self) -> str:
        return "access-token-for-the-test"

    def refresh_after_unauthorized(self, *, rejected_token: str) -> None:
        raise AssertionError("no 401 in these tests")


@pytest.fixture
def order_client(settings: Any, tiny_platform: TinyPlatform, no_embargo: None, seller: Any) -> Any:
    settings.PLATFORM_BASE_URL = tiny_platform.url
    return OrderSourceClient(seller_id=seller.id, tokens=_Tokens())


def _stored() -> str:
    calls = PlatformCall.objects.order_by("id")
    return "\n".join(f"{c.path} {c.error} {c.request_excerpt} {c.response_excerpt}" for c in calls)


def _assert_no_personal_data(text: str) -> None:
    found = [value for value in PERSONAL if value in text]
    assert not found, f"personal data in the call log: {found}\n{text}"


def test_a_refused_return_push_keeps_its_body_without_the_buyer(
    order_client: Any, tiny_platform: TinyPlatform
) -> None:
    tiny_platform.answer(
        "PUT",
        "/orders/MP-77/returns/R-1",
        Answer(400, json.dumps({"message": "respond_date is before request_date"})),
    )
    body = {k: v for k, v in RETURN.items() if k not in ("status", "rma", "notes")}
    with pytest.raises(PlatformRejected):
        order_client.put_return("MP-77", "R-1", body)

    call = PlatformCall.objects.get()
    assert call.status == 400
    # The request body is kept (a refused call is when people read it), scrubbed.
    assert '"customer_email":"[omitted]"' in call.request_excerpt
    assert '"shipping_address":"[omitted]"' in call.request_excerpt
    assert '"sku":"SKU-RED"' in call.request_excerpt
    assert "respond_date is before request_date" in call.response_excerpt
    _assert_no_personal_data(_stored())


def test_answers_of_put_return_get_returns_and_complete_name_no_buyer(
    order_client: Any, tiny_platform: TinyPlatform
) -> None:
    tiny_platform.answer("PUT", "/orders/MP-77/returns/R-1", Answer(200, json.dumps(RETURN)))
    listing = {"returns": [RETURN, {**RETURN, "mp_return_number": "R-2"}], "next_cursor": None}
    tiny_platform.answer("GET", "/returns", Answer(200, json.dumps(listing)))
    completed = {**RETURN, "status": "COMPLETED", "rma": "RMA-1"}
    tiny_platform.answer(
        "POST", "/orders/MP-77/returns/R-1/complete", Answer(200, json.dumps(completed))
    )

    order_client.put_return("MP-77", "R-1", {k: v for k, v in RETURN.items() if k != "status"})
    assert order_client.list_returns(page_size=20)["returns"][1]["customer_email"] == EMAIL
    order_client.complete_return("MP-77", "R-1")

    calls = list(PlatformCall.objects.order_by("id"))
    assert [(c.method, c.path.split("?")[0], c.status) for c in calls] == [
        ("PUT", "/orders/MP-77/returns/R-1", 200),
        ("GET", "/returns", 200),
        ("POST", "/orders/MP-77/returns/R-1/complete", 200),
    ]
    assert '"mp_return_number":"R-1"' in calls[0].response_excerpt
    _assert_no_personal_data(_stored())


def test_a_refused_order_push_keeps_no_customer_address_or_notes(
    order_client: Any, tiny_platform: TinyPlatform
) -> None:
    answer = {"message": "invalid order", "errors": [{"field": "customer.email", "value": EMAIL}]}
    tiny_platform.answer("PUT", "/orders/MP-77", Answer(400, json.dumps(answer)))
    with pytest.raises(PlatformRejected) as refused:
        order_client.put_order("MP-77", ORDER)

    call = PlatformCall.objects.get()
    assert '"customer":"[omitted]"' in call.request_excerpt
    assert '"delivery_notes":"[omitted]"' in call.request_excerpt
    assert '"sku":"SKU-RED"' in call.request_excerpt
    _assert_no_personal_data(_stored())
    # The platform's words quote the e-mail: the error people read does not.
    assert EMAIL not in str(refused.value)


def test_the_log_filter_and_redact_drop_e_mail_addresses() -> None:
    assert redact(f"customer_email {EMAIL} is invalid") == "customer_email [e-mail] is invalid"
    # A URL's user@host (no dot in the host) and a plain @ stay readable.
    assert redact("ssh deploy@buildhost and @mentions") == "ssh deploy@buildhost and @mentions"
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "refund for %s", (EMAIL,), None)
    assert RedactSecretsFilter().filter(record)
    assert record.getMessage() == "refund for [e-mail]"
