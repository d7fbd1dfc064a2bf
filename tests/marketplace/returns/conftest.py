"""Fixtures of the returns tests: a shipped order, an in-memory Order Source (the returns
and refunds calls, counted, strict about the reference's filters), and a quiet broker for
the steps' wake-ups.

The fake follows the reference where the app depends on it: ``GET /refunds`` knows
``refund_status``, ``mp_order_numbers``, ``created_after``/``created_before``,
``page_size``, ``cursor`` and refuses anything else (``status``, ``updated_after``: a
strict platform's 400); an errors call pauses a refund, the seller's correction brings it
back ``CREATED`` with corrected lines; ``complete`` is refused while ``PAUSED``. The
returns listing refuses a ``status`` naming ``REJECTED``. The end-to-end tests
(test_end_to_end.py, test_refund_lifecycle_end_to_end.py) run against the real sandbox.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from marketplace.orders.models import Order, OrderLine, OrderSync, Shipment
from marketplace.platform.errors import PlatformRejected
from tests.support.factories import OrderFactory, PlatformConnectionFactory

REFUND_FILTERS = {"mp_order_numbers", "refund_status", "created_after", "created_before"}
RETURN_FILTERS = {"mp_order_numbers", "status", "updated_after"}
RETURN_STATES = {"AWAITING_AUTHORIZATION", "AUTHORIZED", "REFUNDED", "COMPLETED"}


def _values(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(value.split(","))
    return {str(v) for v in value or []}


@dataclass
class FakeOrderSource:
    """The returns/refunds calls of ``OrderSourceClient``, in memory."""

    returns: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    return_refunds: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    refunds: dict[str, dict[str, Any]] = field(default_factory=dict)
    updated: dict[str, datetime] = field(default_factory=dict)
    calls: list[tuple[str, Any]] = field(default_factory=list)
    fail: dict[str, list[Exception]] = field(default_factory=dict)

    def _maybe_fail(self, name: str) -> None:
        queue = self.fail.get(name)
        if queue:
            raise queue.pop(0)

    def touch(self, key: str) -> None:
        self.updated[key] = timezone.now()

    # platform-side helpers
    def add_refund(self, refund_id: int, order: str, lines: list[dict[str, Any]]) -> None:
        self.refunds[str(refund_id)] = {
            "feedamp_refund_id": refund_id,
            "mp_order_number": order,
            "notes": None,
            "status": "CREATED",
            "date_created": timezone.localdate().isoformat(),
            "merchant_refund_lines": lines,
            "errors": [],
        }

    def correct_refund(self, refund_id: int, lines: list[dict[str, Any]]) -> None:
        """The seller resolves a paused refund: back to CREATED, new lines, no errors."""
        refund = self.refunds[str(refund_id)]
        assert refund["status"] == "PAUSED", refund
        refund.update(status="CREATED", merchant_refund_lines=lines, errors=[])

    def set_return(self, order: str, number: str, status: str, **extra: Any) -> None:
        entry = self.returns.setdefault(
            (order, number),
            {"mp_order_number": order, "mp_return_number": number, "rma": None, "notes": None},
        )
        entry.update(status=status, **extra)
        self.touch(f"return:{order}/{number}")

    # the client's calls
    def put_return(self, order: str, number: str, payload: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("put_return", (order, number, payload)))
        self._maybe_fail("put_return")
        if payload.get("mp_order_number") != order:
            raise PlatformRejected("mp_order_number: required, equal to the path", status=400)
        if (order, number) not in self.returns:
            self.set_return(order, number, "AWAITING_AUTHORIZATION")
        return self.returns[(order, number)]

    def get_return(self, order: str, number: str) -> dict[str, Any]:
        self.calls.append(("get_return", (order, number)))
        self._maybe_fail("get_return")
        return copy.deepcopy(self.returns[(order, number)])

    def complete_return(self, order: str, number: str) -> None:
        self.calls.append(("complete_return", (order, number)))
        self._maybe_fail("complete_return")
        self.returns[(order, number)]["status"] = "COMPLETED"
        self.touch(f"return:{order}/{number}")

    def post_return_errors(self, order: str, number: str, errors: list[dict[str, Any]]) -> None:
        self.calls.append(("post_return_errors", (order, number, errors)))
        self._maybe_fail("post_return_errors")

    def get_return_refunds(self, order: str, number: str) -> dict[str, Any]:
        self.calls.append(("get_return_refunds", (order, number)))
        self._maybe_fail("get_return_refunds")
        status = self.returns.get((order, number), {}).get("status", "REFUNDED")
        lines = copy.deepcopy(self.return_refunds.get((order, number), []))
        return {"status": status, "merchant_refund_lines": lines, "errors": []}

    def get_refund(self, order: str, refund_id: str) -> dict[str, Any]:
        self.calls.append(("get_refund", (order, refund_id)))
        self._maybe_fail("get_refund")
        return copy.deepcopy(self.refunds[str(refund_id)])

    def complete_refund(self, order: str, refund_id: str) -> None:
        self.calls.append(("complete_refund", (order, refund_id)))
        self._maybe_fail("complete_refund")
        refund = self.refunds[str(refund_id)]
        if refund["status"] == "PAUSED":
            raise PlatformRejected(f"refund {refund_id} is PAUSED", status=409)
        refund["status"] = "COMPLETE"

    def post_refund_errors(self, order: str, refund_id: str, errors: list[dict[str, Any]]) -> None:
        self.calls.append(("post_refund_errors", (order, refund_id, errors)))
        self._maybe_fail("post_refund_errors")
        refund = self.refunds[str(refund_id)]
        refund.update(status="PAUSED", errors=copy.deepcopy(errors))

    @staticmethod
    def _page(kind: str, selected: list[dict[str, Any]], filters: dict[str, Any]) -> dict:
        size = int(filters.get("page_size") or 20)
        start = int(filters.get("cursor") or 0)
        page = copy.deepcopy(selected[start : start + size])
        more = start + size < len(selected)
        return {kind: page, "next_cursor": str(start + size) if more else None}

    def list_returns(self, **filters: Any) -> dict[str, Any]:
        self.calls.append(("list_returns", filters))
        self._maybe_fail("list_returns")
        given = {k for k, v in filters.items() if v is not None} - {"page_size", "cursor"}
        if given - RETURN_FILTERS:
            raise PlatformRejected(f"unknown filters {sorted(given - RETURN_FILTERS)}", status=400)
        statuses = _values(filters.get("status"))
        if statuses - RETURN_STATES:
            raise PlatformRejected(
                f"status: unknown {sorted(statuses - RETURN_STATES)}", status=400
            )
        after = filters.get("updated_after")
        if isinstance(after, str):
            after = parse_datetime(after)
        selected = [
            item
            for (order, number), item in self.returns.items()
            if (not statuses or item["status"] in statuses)
            and (after is None or self.updated[f"return:{order}/{number}"] > after)
        ]
        return self._page("returns", selected, filters)

    def list_refunds(self, **filters: Any) -> dict[str, Any]:
        self.calls.append(("list_refunds", filters))
        self._maybe_fail("list_refunds")
        given = {k for k, v in filters.items() if v is not None} - {"page_size", "cursor"}
        if given - REFUND_FILTERS:
            raise PlatformRejected(f"unknown filters {sorted(given - REFUND_FILTERS)}", status=400)
        statuses = _values(filters.get("refund_status"))
        selected = [r for r in self.refunds.values() if not statuses or r["status"] in statuses]
        return self._page("refunds", selected, filters)

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


@pytest.fixture
def fake_platform(monkeypatch: pytest.MonkeyPatch) -> FakeOrderSource:
    from marketplace.returns.services import steps
    from marketplace.sync import pull  # the sync makes the pull's client

    fake = FakeOrderSource()
    monkeypatch.setattr(steps, "order_client_for", lambda connection, **kw: fake)
    monkeypatch.setattr(pull, "order_client_for", lambda connection, **kw: fake)
    return fake


@pytest.fixture
def wakes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Steps' wake-ups recorded, not sent (tests drain themselves)."""
    from marketplace.returns.services import steps

    woken: list[str] = []
    monkeypatch.setattr(steps, "steps_wake", lambda: woken.append("drain"))
    return woken


def shipped_order(
    *,
    seller: Any = None,
    number: str | None = None,
    currency: str = "EUR",
    lines: list[dict[str, Any]] | None = None,
    pushed: bool = True,
) -> Order:
    """An order on the platform, every line shipped. Default line 1: 2 x 10.00, tax
    1.60, shipping 3.00, discount 0.60 → paid 24.00."""
    kwargs: dict[str, Any] = {"currency": currency, "lines": 0, "state": Order.State.SHIPPED}
    if seller is not None:
        kwargs["seller"] = seller
    if number:
        kwargs["mp_order_number"] = number
    order = OrderFactory(**kwargs)
    if seller is None:
        PlatformConnectionFactory(seller=order.seller)
    specs = lines or [
        {
            "quantity": 2,
            "unit_price": "10.00",
            "taxes": [{"type": "VAT", "amount": "1.60"}],
            "shipping_price": "3.00",
            "discounts": [{"name": "promo", "amount": "0.60", "type": "fixed"}],
        }
    ]
    for n, spec in enumerate(specs, start=1):
        line = OrderLine.objects.create(
            order=order,
            mp_line_number=str(n),
            sku=f"SKU-{n}",
            product_name=f"Mug {n}",
            quantity=spec["quantity"],
            unit_price=Decimal(spec["unit_price"]),
            shipping_price=Decimal(spec.get("shipping_price", "0")),
            taxes=spec.get("taxes", []),
            discounts=spec.get("discounts", []),
        )
        Shipment.objects.create(line=line, quantity=spec["quantity"], carrier="DHL")
    OrderSync.objects.create(
        order=order,
        status=OrderSync.Status.SYNCED,
        desired_version=1,
        pushed_version=1 if pushed else 0,
    )
    return order


def refund_line(
    line: str = "1",
    *,
    item: str = "0",
    item_tax: str = "0",
    shipping: str = "0",
    shipping_tax: str = "0",
    discount: str = "0",
    quantity: int = 1,
    currency: str = "EUR",
) -> dict[str, Any]:
    """A refund line as the platform lists it (amounts as JSON numbers)."""
    return {
        "mp_line_number": line,
        "currency": currency,
        "refund_quantity": quantity,
        "item_refund": float(item),
        "item_tax_refund": float(item_tax),
        "shipping_refund": float(shipping),
        "shipping_tax_refund": float(shipping_tax),
        "discount_refund": float(discount),
        "reason": "CUSTOMER_CANCELLED",
    }
