"""The return intake (``POST …/returns``) fuzzed against an order that exists (the
intake API's own fuzz, ``tests/marketplace/orders/test_intake_fuzz.py``, sends numbers
that do not, so its return bodies end at the 404 and never reach the service).

Every generated body goes to a shipped order's returns: no answer may be a 5xx (an
absurd ``request_date`` once overflowed the respond date) or differ from the document.
The rules that need the order (the line is on it, shipped, not returned yet) are prose,
not schema: ``_on_the_order`` points a generated body's lines at the order's one line,
so the rest of the body (number, reason, parcel, ``request_date``) reaches the service.
Whether the API takes a body the document allows is not checked (a line returned by an
earlier example is rightly refused)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from marketplace.orders.models import Order
from tests.marketplace.returns.conftest import shipped_order

pytestmark = pytest.mark.django_db

EXAMPLES = 40
ORDER = "MP-FUZZ-RET"

_config = SchemathesisConfig.from_dict({"checks": {"positive_data_acceptance": {"enabled": False}}})
schema = schemathesis.openapi.from_wsgi(
    "/api/intake/openapi.json", WSGIHandler(), config=_config
).include(path_regex="/returns$", method="POST")


@pytest.fixture(autouse=True)
def _requests_keep_the_test_transaction(db: Any) -> Iterator[None]:
    # As Django's test Client does: a request must not close the test's connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _on_the_order(body: Any) -> Any:
    if isinstance(body, dict) and isinstance(body.get("return_lines"), list):
        body["return_lines"] = [{"mp_line_number": "1", "quantity": 1}]
    return body


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_return_operations_on_a_real_order_never_fail(
    case: Any, api_key: str, wakes: list[str]
) -> None:
    if not Order.objects.filter(mp_order_number=ORDER).exists():  # once per test run
        shipped_order(number=ORDER)
    case.path_parameters = {**(case.path_parameters or {}), "mp_order_number": ORDER}
    if case.body is not None:
        case.body = _on_the_order(case.body)
    case.call_and_validate(headers={"Authorization": f"Bearer {api_key}"})
