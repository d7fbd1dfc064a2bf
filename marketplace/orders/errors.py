"""Errors the order services raise; the intake API maps each to one HTTP status."""

from __future__ import annotations


class OrderError(Exception):
    """Base class of the order domain's errors."""


class IntakeInvalid(OrderError):
    """The body breaks a rule (400). ``fields`` maps a dotted field path to messages."""

    def __init__(self, fields: dict[str, list[str]]) -> None:
        super().__init__("invalid order: " + ", ".join(sorted(fields)))
        self.fields = fields


class OrderNotFound(OrderError):
    """No order with this marketplace order number (404)."""


class IllegalTransition(OrderError):
    """The state change is not allowed from the order's current state (409)."""

    def __init__(self, current: str, requested: str, reason: str = "") -> None:
        message = reason or f"cannot change an order from {current} to {requested}"
        super().__init__(message)
        self.current = current
        self.requested = requested
        self.message = message


class DuplicateOrderConflict(OrderError):
    """The order number exists with a different body (409)."""

    def __init__(self, mp_order_number: str) -> None:
        super().__init__(
            f"order {mp_order_number} already exists with a different body; "
            "change its state with the state endpoint instead"
        )
        self.mp_order_number = mp_order_number
