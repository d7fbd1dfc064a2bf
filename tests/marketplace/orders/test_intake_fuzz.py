"""The intake API against its own OpenAPI document, with a schema-driven fuzzer.

Schemathesis generates requests from ``/api/intake/openapi.json`` and sends them to
the WSGI app with a valid key. It fails on any 5xx, on any response that does not
match the document, and on any request the document allows that the API refuses
(positive data must get a 2xx, 404 for an order number that does not exist, or the
documented 409 for a number already used with a different body).

A JSON schema cannot say five of the rules (they are in the document's prose): the
seller must exist, line numbers are unique within an order, a window's earliest date
is not after its latest, a return's ``request_date`` is not after tomorrow, and an
amount is no finer than the order currency's minor unit (Babel's: JPY whole yen).
``_within_prose_rules`` makes a generated body follow those five and nothing else, so
everything the document *can* say is tested as is.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

import pytest
import schemathesis
from babel.numbers import get_currency_precision
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from pydantic import AwareDatetime, TypeAdapter
from schemathesis.config import SchemathesisConfig

from tests.support.app_fixtures import APP_SELLER

pytestmark = pytest.mark.django_db

# Bounded so the whole run stays well under a minute on a small machine.
EXAMPLES = 50
INSTANT = TypeAdapter(AwareDatetime)
WINDOWS = (
    ("earliest_ship_date", "latest_ship_date"),
    ("earliest_delivery_date", "latest_delivery_date"),
)


def _config() -> SchemathesisConfig:
    config = SchemathesisConfig.from_dict(
        {
            "checks": {
                "positive_data_acceptance": {"expected-statuses": ["2xx", "404", "409"]},
            }
        }
    )
    return config


@pytest.fixture(autouse=True)
def _requests_keep_the_test_transaction(db: Any) -> Iterator[None]:
    # As Django's test Client does: a request must not close the connection that holds
    # the test's transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _within_prose_rules(body: Any) -> Any:
    if isinstance(body, dict) and isinstance(body.get("request_date"), str):
        asked = _day(body["request_date"])
        if asked is not None and asked > date.today():
            body["request_date"] = date.today().isoformat()
    if not isinstance(body, dict) or "order_lines" not in body:
        return body
    if isinstance(body.get("seller"), str):
        body["seller"] = APP_SELLER
    lines = body["order_lines"] if isinstance(body["order_lines"], list) else []
    seen: set[str] = set()
    for index, line in enumerate(lines):
        number = line.get("mp_line_number") if isinstance(line, dict) else None
        if isinstance(number, str):
            if number in seen:
                line["mp_line_number"] = number = f"dup{index}"
            seen.add(number)
    for start, end in WINDOWS:
        first, last = _instant(body.get(start)), _instant(body.get(end))
        if first and last and first > last:
            body[start], body[end] = body[end], body[start]
    if isinstance(body.get("currency"), str):
        places = get_currency_precision(body["currency"])
        for line in lines:
            if isinstance(line, dict):
                _amounts_in_unit(line, places)
    return body


def _amounts_in_unit(line: dict[str, Any], places: int) -> None:
    """Cut each amount string to the currency's minor unit (the prose rule)."""

    def cut(value: Any) -> Any:
        if not isinstance(value, str) or "." not in value:
            return value
        whole, fraction = value.split(".", 1)
        return f"{whole}.{fraction[:places]}" if places else whole

    for key in ("unit_price", "shipping_price"):
        if key in line:
            line[key] = cut(line[key])
    for key in ("taxes", "discounts"):
        for entry in line.get(key) or []:
            if isinstance(entry, dict) and "amount" in entry:
                entry["amount"] = cut(entry["amount"])


def _day(value: str) -> date | None:
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def _instant(value: Any) -> datetime | None:
    try:
        return INSTANT.validate_python(value)
    except ValueError:
        return None


schema = schemathesis.openapi.from_wsgi("/api/intake/openapi.json", WSGIHandler(), config=_config())


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_the_api_accepts_what_its_document_allows_and_never_fails(
    case: Any, api_key: str, seller: Any, quiet_broker: Any
) -> None:
    if case.body is not None:
        case.body = _within_prose_rules(case.body)
    case.call_and_validate(headers={"Authorization": f"Bearer {api_key}"})
