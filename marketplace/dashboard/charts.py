"""Server-rendered SVG charts: no JavaScript library, no CDN, readable offline."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from marketplace.dashboard.selectors import HourBucket

WIDTH = 960
HEIGHT = 240
PAD_LEFT = 36
PAD_RIGHT = 8
PAD_TOP = 12
PAD_BOTTOM = 28
# (attribute, label, CSS class) per series; colours live in app.css.
SERIES = (
    ("pushes", "Pushes", "series-push"),
    ("pulls", "Pulls", "series-pull"),
    ("failures", "Failures", "series-fail"),
)


def _nice_max(value: int) -> int:
    """A round axis maximum at or above ``value`` (1, 2, 5, 10, 20, 50, ...)."""
    if value <= 0:
        return 1
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def hourly_bars_svg(buckets: Sequence[HourBucket], *, title: str) -> SafeString:
    """Grouped bars (pushes, pulls, failures) per hour, times in UTC."""
    plot_w = WIDTH - PAD_LEFT - PAD_RIGHT
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    top = _nice_max(max((max(b.pushes, b.pulls, b.failures) for b in buckets), default=0))
    slot = plot_w / max(len(buckets), 1)
    bar = max((slot - 4) / len(SERIES), 1)
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" preserveAspectRatio="xMidYMid meet">',
        f"<title>{escape(title)}</title>",
    ]
    for fraction in (0, 0.5, 1):
        y = PAD_TOP + plot_h * (1 - fraction)
        parts.append(
            f'<line class="grid-line" x1="{PAD_LEFT}" x2="{WIDTH - PAD_RIGHT}" '
            f'y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{PAD_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{round(top * fraction)}</text>"
        )
    for index, bucket in enumerate(buckets):
        x0 = PAD_LEFT + index * slot + 2
        for offset, (attr, label, css) in enumerate(SERIES):
            value = getattr(bucket, attr)
            height = plot_h * value / top
            y = PAD_TOP + plot_h - height
            parts.append(
                f'<rect class="{css}" x="{x0 + offset * bar:.1f}" y="{y:.1f}" '
                f'width="{bar:.1f}" height="{height:.1f}">'
                f"<title>{bucket.start:%H}:00 UTC: {value} {label.lower()}</title></rect>"
            )
        if index % 3 == 0:
            parts.append(
                f'<text class="axis" x="{x0 + slot / 2 - 2:.1f}" y="{HEIGHT - 8}" '
                f'text-anchor="middle">{bucket.start:%H}:00</text>'
            )
    parts.append("</svg>")
    # Every interpolated value above is a number, a datetime format or escaped text.
    return mark_safe("".join(parts))  # noqa: S308


def chart_legend() -> list[tuple[str, str]]:
    return [(label, css) for _, label, css in SERIES]
