"""What the staff and the seller pages show of one seller: the same figures, windows,
chart and lists (the pages differ in links and words only)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone

from marketplace.performance import selectors
from marketplace.performance.charts import trend_svg
from marketplace.performance.measures import BY_KEY, MEASURES, WINDOWS, value_text

DEFAULT_MEASURE = "late_shipment"


def window_of(request: HttpRequest, default: int = 30) -> int:
    try:
        days = int(request.GET.get("window", default))
    except ValueError:
        return default
    return days if days in WINDOWS else default


def scorecard_context(request: HttpRequest, *, seller_id: int) -> dict[str, Any]:
    window = window_of(request)
    measure = BY_KEY.get(request.GET.get("measure", ""), BY_KEY[DEFAULT_MEASURE])
    card = selectors.seller_scorecard(seller_id=seller_id)
    points = selectors.trend(seller_id=seller_id, measure=measure, window_days=window)
    figures = card.figures(window)
    return {
        "card": card,
        "row": card.window(window),
        "window": window,
        "windows": WINDOWS,
        "figures": [
            {
                "figure": figure,
                "text": value_text(figure.measure, figure.value),
                "limit": value_text(figure.measure, figure.threshold),
                "bad": "above" if figure.measure.bad == "above" else "below",
            }
            for figure in figures
        ],
        "measure": measure,
        "measures": MEASURES,
        "chart": trend_svg(
            points,
            measure=measure,
            title=f"{measure.label}, {window}-day window, each day of the last 90",
        ),
        "points": len([p for p in points if p[1] is not None]),
        "flag_window": int(settings.PERFORMANCE_FLAG_WINDOW_DAYS),
        "min_sample": int(settings.PERFORMANCE_MIN_SAMPLE),
    }


def orders_context(request: HttpRequest, *, seller_id: int, kind: str) -> dict[str, Any]:
    window = window_of(request)
    card = selectors.seller_scorecard(seller_id=seller_id)
    row = card.window(window)
    as_of = row.computed_at if row else timezone.now()
    context: dict[str, Any] = {
        "kind": kind,
        "title": selectors.ORDER_LISTS.get(kind, ""),
        "window": window,
        "windows": WINDOWS,
        "as_of": as_of,
        "row": row,
    }
    if kind == "returns_overdue":
        context["returns"] = list(
            selectors.returns_overdue(seller_id=seller_id, window_days=window, as_of=as_of)[:200]
        )
    else:
        context["orders"] = list(
            selectors.orders_behind(
                seller_id=seller_id, kind=kind, window_days=window, as_of=as_of
            )[:500]
        )
    return context
