"""Returns and seller-initiated refunds of the Order Source interface (v1).

``returns-refunds-contract.md``: the marketplace creates a return (``PUT``), reads the
returns' progress (``GET /returns`` with ``updated_after``, our choice: the reference's
return filters are not published) and the sellers' refunds (``GET /refunds`` with
``refund_status``: the reference has no update-time filter there), and answers each one:
``complete`` or ``errors``. Every date-time sent is UTC with ``Z``, whole seconds. These
calls are mixed into ``order_source.OrderSourceClient`` (one client per seller: the
seller's token, embargo, budget and call log are the same as for its orders); this module
only adds the paths.

Money in answers is JSON numbers: callers read them with ``decimal_amount`` (through
their shortest text, ``6.99`` → ``Decimal("6.99")``), never with float arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import quote

from marketplace.platform.dates import to_wire
from marketplace.platform.errors import PlatformMalformedResponse


def query_param(value: Any) -> str:
    """A listing filter as the platform reads it (UTC date-times with ``Z``, comma lists)."""
    if isinstance(value, datetime):
        return to_wire(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | set):
        return ",".join(str(v) for v in value)
    return str(value)


def decimal_amount(value: Any) -> Decimal | None:
    """A money value from an answer as a Decimal (via its text: never float arithmetic),
    or None when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        return None
    try:
        amount = Decimal(str(value))
    except ArithmeticError:
        return None
    return amount if amount.is_finite() else None


def _seg(value: str | int) -> str:
    return quote(str(value), safe="")


class ReturnsRefundsCalls:
    """The return and refund calls; needs ``_request`` (``OrderSourceClient``'s)."""

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        json_body: Any = None,
        order_number: str = "",
        budget: bool = False,
    ) -> Any:  # pragma: no cover - provided by the client class
        raise NotImplementedError

    @staticmethod
    def _object(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise PlatformMalformedResponse("expected a JSON object", status=200)
        return data

    # --- returns --------------------------------------------------------------------

    def put_return(
        self, mp_order_number: str, mp_return_number: str, payload: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Create (or repeat) a return: ``PUT /orders/{n}/returns/{r}``."""
        return self._object(
            self._request(
                "PUT",
                f"/orders/{_seg(mp_order_number)}/returns/{_seg(mp_return_number)}",
                json_body=payload,
                order_number=mp_order_number,
            )
        )

    def get_return(self, mp_order_number: str, mp_return_number: str) -> dict[str, Any]:
        return self._object(
            self._request(
                "GET",
                f"/orders/{_seg(mp_order_number)}/returns/{_seg(mp_return_number)}",
                order_number=mp_order_number,
            )
        )

    def get_return_refunds(self, mp_order_number: str, mp_return_number: str) -> dict[str, Any]:
        """The seller's refund amounts of a return (``.../refunds``)."""
        return self._object(
            self._request(
                "GET",
                f"/orders/{_seg(mp_order_number)}/returns/{_seg(mp_return_number)}/refunds",
                order_number=mp_order_number,
            )
        )

    def complete_return(self, mp_order_number: str, mp_return_number: str) -> None:
        self._request(
            "POST",
            f"/orders/{_seg(mp_order_number)}/returns/{_seg(mp_return_number)}/complete",
            json_body={},
            order_number=mp_order_number,
        )

    def post_return_errors(
        self, mp_order_number: str, mp_return_number: str, errors: list[dict[str, Any]]
    ) -> None:
        self._request(
            "POST",
            f"/orders/{_seg(mp_order_number)}/returns/{_seg(mp_return_number)}/errors",
            json_body=errors,
            order_number=mp_order_number,
        )

    def list_returns(self, **filters: Any) -> dict[str, Any]:
        """One page of ``GET /returns`` (``mp_order_numbers``, ``status`` (never
        ``REJECTED``: the reference has no such state), ``updated_after``, ``page_size``,
        ``cursor``)."""
        return self._listing("/returns", "returns", filters)

    def iter_return_pages(self, **filters: Any) -> Iterator[dict[str, Any]]:
        return self._pages(self.list_returns, filters)

    # --- seller refunds -------------------------------------------------------------

    def list_refunds(self, **filters: Any) -> dict[str, Any]:
        """One page of ``GET /refunds`` (``mp_order_numbers``, ``refund_status``,
        ``created_after`` / ``created_before`` (on or after / before), ``page_size``,
        ``cursor``). No ``status``, no ``updated_after``: the platform has neither."""
        return self._listing("/refunds", "refunds", filters)

    def iter_refund_pages(self, **filters: Any) -> Iterator[dict[str, Any]]:
        return self._pages(self.list_refunds, filters)

    def get_refund(self, mp_order_number: str, refund_id: str | int) -> dict[str, Any]:
        """One refund's current version (re-read before an errors call)."""
        return self._object(
            self._request(
                "GET",
                f"/orders/{_seg(mp_order_number)}/refunds/{_seg(refund_id)}",
                order_number=mp_order_number,
            )
        )

    def complete_refund(self, mp_order_number: str, refund_id: str | int) -> None:
        self._request(
            "POST",
            f"/orders/{_seg(mp_order_number)}/refunds/{_seg(refund_id)}/complete",
            json_body={},
            order_number=mp_order_number,
        )

    def post_refund_errors(
        self, mp_order_number: str, refund_id: str | int, errors: list[dict[str, Any]]
    ) -> None:
        self._request(
            "POST",
            f"/orders/{_seg(mp_order_number)}/refunds/{_seg(refund_id)}/errors",
            json_body=errors,
            order_number=mp_order_number,
        )

    # --- listings -------------------------------------------------------------------

    def _listing(self, path: str, key: str, filters: Mapping[str, Any]) -> dict[str, Any]:
        params = {k: query_param(v) for k, v in filters.items() if v is not None}
        page = self._object(self._request("GET", path, params=params, budget=True))
        if not isinstance(page.get(key), list):
            raise PlatformMalformedResponse(f"listing without a {key} list", status=200)
        return page

    @staticmethod
    def _pages(list_page: Any, filters: dict[str, Any]) -> Iterator[dict[str, Any]]:
        filters = {k: v for k, v in filters.items() if k != "cursor"}
        cursor: str | None = None
        while True:
            page: dict[str, Any] = list_page(**filters, cursor=cursor)
            yield page
            cursor = page.get("next_cursor") or None
            if not cursor:
                return
