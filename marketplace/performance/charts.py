"""The trend chart, drawn here as inline SVG: nothing loaded from elsewhere, and no
``style`` attribute or element (the CSP allows styles from our files only; SVG's
presentation attributes and classes are not styles). ``viewBox`` scaling keeps it
readable from 390 px up."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from marketplace.performance.measures import Measure, value_text

# Small units: on a 390 px phone the chart is drawn near its own size, so its 11 px
# labels stay 11 px; wider screens scale it up to the CSS max-width.
WIDTH = 360
HEIGHT = 170
PAD_LEFT = 52
PAD_RIGHT = 12
PAD_TOP = 14
PAD_BOTTOM = 30


def _nice_top(value: float, unit: str) -> float:
    if unit == "percent":
        for top in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0):
            if value <= top:
                return top
        return 1.0
    step = 1.0
    while True:
        for factor in (1, 2, 5):
            if value <= step * factor:
                return step * factor
        step *= 10


def trend_svg(
    points: Sequence[tuple[date, float | None]], *, measure: Measure, title: str
) -> SafeString:
    """A line of the measure per day and a dashed line at its threshold."""
    plot_w = WIDTH - PAD_LEFT - PAD_RIGHT
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    values = [v for _, v in points if v is not None]
    threshold = measure.threshold
    top = _nice_top(max([*values, threshold, 0.0001]) * 1.1, measure.unit)
    count = len(points)

    def x(index: int) -> float:
        return PAD_LEFT + (plot_w * index / (count - 1) if count > 1 else plot_w / 2)

    def y(value: float) -> float:
        return PAD_TOP + plot_h * (1 - min(value, top) / top)

    parts = [
        f'<svg class="chart trend" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" preserveAspectRatio="xMidYMid meet">',
        f"<title>{escape(title)}</title>",
    ]
    for fraction in (0, 0.5, 1):
        gy = PAD_TOP + plot_h * (1 - fraction)
        parts.append(
            f'<line class="grid-line" x1="{PAD_LEFT}" x2="{WIDTH - PAD_RIGHT}" '
            f'y1="{gy:.1f}" y2="{gy:.1f}"/>'
            f'<text class="axis" x="{PAD_LEFT - 6}" y="{gy + 4:.1f}" text-anchor="end">'
            f"{escape(value_text(measure, top * fraction))}</text>"
        )
    ty = y(threshold)
    parts.append(
        f'<line class="threshold" x1="{PAD_LEFT}" x2="{WIDTH - PAD_RIGHT}" y1="{ty:.1f}" '
        f'y2="{ty:.1f}" stroke-dasharray="6 4"><title>Limit: '
        f"{escape(value_text(measure, threshold))}</title></line>"
    )
    # One polyline per run of consecutive days with a value (a gap where none).
    run: list[str] = []
    runs: list[list[str]] = []
    for index, (_day, value) in enumerate(points):
        if value is None:
            if run:
                runs.append(run)
            run = []
            continue
        run.append(f"{x(index):.1f},{y(value):.1f}")
    if run:
        runs.append(run)
    for line in runs:
        parts.append(f'<polyline class="trend-line" fill="none" points="{" ".join(line)}"/>')
    for index, (day, value) in enumerate(points):
        if value is None:
            continue
        over = measure.is_over(value)
        parts.append(
            f'<circle class="trend-point{" over" if over else ""}" cx="{x(index):.1f}" '
            f'cy="{y(value):.1f}" r="3"><title>{day:%Y-%m-%d}: '
            f"{escape(value_text(measure, value))}</title></circle>"
        )
    if points:
        for index in sorted({0, count - 1}):
            anchor = "start" if index == 0 and count > 1 else "end"
            parts.append(
                f'<text class="axis" x="{x(index):.1f}" y="{HEIGHT - 8}" '
                f'text-anchor="{anchor}">{points[index][0]:%d %b}</text>'
            )
    else:
        parts.append(
            f'<text class="axis" x="{WIDTH / 2:.0f}" y="{HEIGHT / 2:.0f}" '
            'text-anchor="middle">No figures yet</text>'
        )
    parts.append("</svg>")
    # Every interpolated value above is a number, a date format or escaped text.
    return mark_safe("".join(parts))  # noqa: S308
