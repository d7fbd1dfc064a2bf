"""``{% load performance %}``: a measure's stored value as people read it."""

from __future__ import annotations

from typing import Any

from django import template

from marketplace.performance.measures import BY_KEY, MEASURES, value_text
from marketplace.performance.selectors import LIST_COLUMNS

register = template.Library()


@register.filter
def measure_value(value: float | None, key: str) -> str:
    """``{{ seller.perf_late_shipment|measure_value:"late_shipment" }}`` -> "4.2 %"."""
    return value_text(BY_KEY[key], value)


@register.filter
def measure_over(value: float | None, key: str) -> bool:
    """Whether ``value`` is past the measure's limit (the list's colour; flags come from
    the recorded crossings, which also need enough of a sample)."""
    return BY_KEY[key].is_over(value)


@register.filter
def figure_of(seller: Any, key: str) -> float | None:
    """The seller's ``perf_<key>`` annotation (``selectors.sellers_with_figures``)."""
    return getattr(seller, f"perf_{key}", None)


@register.simple_tag
def perf_list_columns() -> tuple[str, ...]:
    return LIST_COLUMNS


@register.simple_tag
def perf_sort_choices() -> list[tuple[str, str]]:
    """The sellers list's "Sort by measure" options: each measure, worst first."""
    return [(f"-{m.key}", f"{m.label}, worst first") for m in MEASURES]
