"""Return bodies and the seller's moves (control API) for the returns/refunds tests."""

from __future__ import annotations

import copy
from typing import Any

from tests.sandbox.conftest import Api, order_body
from tests.support.sandbox_process import SandboxProcess

_LINE: dict[str, Any] = {
    "mp_return_line_number": "R1",
    "mp_order_line_number": "1",
    "sku": "SKU-RED",
    "quantity": 1,
    "currency": "EUR",
    "requested_refund_principal": 12.5,
    "requested_refund_tax": "0.83",
    "reason": "arrived broken",
    "preauthorized": False,
    "product_name": "Red mug",
    "unit_price": 12.5,
    "tax": 0.83,
    "carrier": "UPS",
    "tracking_number": "1Z999AA10123456784",
}


def return_line(**overrides: Any) -> dict[str, Any]:
    line = copy.deepcopy(_LINE)
    line.update(overrides)
    return line


def return_body(*lines: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "return_lines": list(lines) or [return_line()],
        "request_date": "2024-05-10",
        "respond_date": "2024-05-24",
        "customer_email": "ada@example.com",
        "return_type": "SHIP",
    }
    body.update(overrides)
    return body


def shipped_order(api: Api, sandbox: SandboxProcess, number: str, **overrides: Any) -> None:
    """An order placed and fully shipped by the seller (line 1: 3 units, line 2: 1)."""
    assert api.put_order(order_body(number, **overrides)).status_code == 201
    sandbox.ship(number)


def put_return(api: Api, number: str, rnumber: str, body: dict[str, Any]) -> Any:
    """PUT the return; the body carries ``mp_order_number`` (the path's) unless it says
    otherwise (a key set to ``None`` is left out)."""
    sent = {"mp_order_number": number, **body}
    sent = {key: value for key, value in sent.items() if value is not None}
    return api.call("PUT", f"/orders/{number}/returns/{rnumber}", json=sent)


def seller_op(sandbox: SandboxProcess, number: str, rnumber: str, op: str, **body: Any) -> Any:
    return sandbox.return_operation(number, rnumber, op, **body)


def seller_refund(sandbox: SandboxProcess, number: str, *lines: dict[str, Any], **body: Any) -> Any:
    return sandbox.seller_refund(number, *lines, **body)
