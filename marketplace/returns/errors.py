"""Errors the return services raise; the intake API maps each to one HTTP status."""

from __future__ import annotations


class ReturnConflict(Exception):
    """The return number exists on this order with a different body (409)."""

    def __init__(self, mp_order_number: str, mp_return_number: str) -> None:
        super().__init__(
            f"return {mp_return_number} of order {mp_order_number} already exists with a "
            "different body"
        )
