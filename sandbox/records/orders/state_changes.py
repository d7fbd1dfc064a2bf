"""Who hears that a marketplace's PUT changed an order's state.

The Order Source API does not know the rooms built on its orders (the seller's v2 order
follows the state at once): they register a listener here when their app is ready, so
the dependency points from them to this room, never back."""

from collections.abc import Callable
from datetime import datetime

from sandbox.records.orders.models import Order

Listener = Callable[[Order, str, datetime], None]

_listeners: dict[str, Listener] = {}


def listen(name: str, listener: Listener) -> None:
    """Idempotent per ``name``."""
    _listeners[name] = listener


def marketplace_state_changed(order: Order, state: str, at: datetime) -> None:
    for listener in _listeners.values():
        listener(order, state, at)
