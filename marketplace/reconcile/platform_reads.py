"""Reading the platform's side of a pass: the listings by ``mp_order_numbers``, 50 numbers a
request (``PULL_PAGE_SIZE``), following ``next_cursor``; every call through the seller's
one client (``marketplace.platform.order_source``). No HTTP code of its own.

Refunds are listed in every status (``refund_status`` left out), so COMPLETE ones are
seen: the pull asks only for ``CREATED`` (the ones to decide).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from marketplace.platform.errors import PlatformRejected
from marketplace.platform.order_source import OrderSourceClient

# The most order numbers one listing request names (the contract's page size).
NUMBERS_PER_REQUEST = 50


@dataclass
class PlatformSide:
    """What the platform holds for the numbers asked about, keyed as we key ours."""

    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    returns: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    refunds: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: int = 0


def _chunks(numbers: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(numbers), NUMBERS_PER_REQUEST):
        yield numbers[start : start + NUMBERS_PER_REQUEST]


def _listed(
    side: PlatformSide, list_page: Callable[..., dict[str, Any]], key: str, numbers: list[str]
) -> Iterator[dict[str, Any]]:
    """Every entry of a listing filtered by ``numbers``, page after page; counts calls."""
    for chunk in _chunks(numbers):
        cursor: str | None = None
        while True:
            side.calls += 1  # counted before it is sent: a failed request counts too
            page = list_page(
                mp_order_numbers=chunk, page_size=settings.PULL_PAGE_SIZE, cursor=cursor
            )
            yield from (e for e in page.get(key) or [] if isinstance(e, dict))
            sent, cursor = cursor, page.get("next_cursor") or None
            if not cursor or cursor == sent:
                break


def _orders_one_by_one(client: OrderSourceClient, side: PlatformSide, numbers: list[str]) -> None:
    """The reference names no error for a number the account lacks; a strict platform
    refuses the whole listing (400). Then each order of that page is read on its own: a
    404 is an order the platform does not hold (found missing), anything else raises."""
    for number in numbers:
        side.calls += 1
        try:
            side.orders[number] = client.get_order(number)
        except PlatformRejected as exc:
            if exc.status != 404:
                raise


def platform_side_read(
    client: OrderSourceClient,
    side: PlatformSide,
    *,
    orders: list[str],
    return_orders: list[str],
    refund_orders: list[str],
) -> PlatformSide:
    """Fill ``side`` with the platform's orders, returns and refunds of these numbers. A
    refused or failed request raises (the pass ends with the error recorded; ``side.calls``
    counts what was asked until then)."""
    for chunk in _chunks(orders):
        try:
            for entry in _listed(side, client.list_orders, "orders", chunk):
                side.orders[str(entry.get("mp_order_number") or "")] = entry
        except PlatformRejected as exc:
            if exc.status != 400:
                raise
            _orders_one_by_one(client, side, chunk)
    for entry in _listed(side, client.list_returns, "returns", return_orders):
        key = (str(entry.get("mp_order_number") or ""), str(entry.get("mp_return_number") or ""))
        side.returns[key] = entry
    for entry in _listed(side, client.list_refunds, "refunds", refund_orders):
        side.refunds[str(entry.get("feedamp_refund_id") or "")] = entry
    return side
