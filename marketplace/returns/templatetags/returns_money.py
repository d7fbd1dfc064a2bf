"""``{{ amount|in_unit:currency }}``: an after-sale amount as its currency writes it.

The money columns keep 3 decimal places for every currency (KWD needs them), so a stored
20.00 EUR reads back as ``20.000``; pages show it in the currency's unit (``20.00``,
``1500`` JPY). Exact only: a value that is not a whole number of units is shown as held."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import template

from marketplace.returns.amounts import in_unit as amount_in_unit

register = template.Library()


@register.filter
def in_unit(amount: Any, currency: str) -> Any:
    if not isinstance(amount, Decimal):
        return amount
    try:
        return amount_in_unit(amount, currency)
    except ValueError:
        return amount
