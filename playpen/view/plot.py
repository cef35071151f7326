"""A small line chart as inline SVG (no plotting library, nothing loaded from the internet); each point is a
link, so a training run's curve leads to the episodes of a step."""

from __future__ import annotations

from html import escape

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 28, 36


def line_chart(title: str, points: list[tuple[float, float, str, str]], *, low: float | None = None,
               high: float | None = None, percent: bool = False, css_class: str = "") -> str:
    """An SVG chart of (x, y, link, tooltip) points; the y range is [low, high] (default: the data's)."""
    if not points:
        return f'<p class="empty">{escape(title)}: no steps recorded</p>'
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    low = min(ys) if low is None else min(low, *ys)
    high = max(ys) if high is None else max(high, *ys)
    if high - low < 1e-9:
        low, high = low - 0.5, high + 0.5
    x0, x1 = min(xs), max(xs)
    span = (x1 - x0) or 1.0

    def at(x: float, y: float) -> tuple[float, float]:
        return (LEFT + (x - x0) / span * (WIDTH - LEFT - RIGHT) if x1 > x0 else (LEFT + WIDTH - RIGHT) / 2,
                HEIGHT - BOTTOM - (y - low) / (high - low) * (HEIGHT - TOP - BOTTOM))

    def label(y: float) -> str:
        return f"{100 * y:.0f}%" if percent else f"{y:.2f}"

    parts = [f'<svg class="chart {escape(css_class)}" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
             f'height="{HEIGHT}" role="img" aria-label="{escape(title)}">',
             f'<text x="{LEFT}" y="18" class="title">{escape(title)}</text>']
    for y in (low, (low + high) / 2, high):  # horizontal grid with labels
        _, py = at(x0, y)
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{py:.1f}" y2="{py:.1f}" class="grid"/>'
                     f'<text x="{LEFT - 6}" y="{py + 4:.1f}" class="axis" text-anchor="end">{label(y)}</text>')
    ticks = sorted(set(xs)) if len(set(xs)) <= 12 else [x0 + i * span / 10 for i in range(11)]
    for x in ticks:
        px, _ = at(x, low)
        parts.append(f'<text x="{px:.1f}" y="{HEIGHT - BOTTOM + 16}" class="axis" '
                     f'text-anchor="middle">{x:g}</text>')
    parts.append(f'<text x="{(WIDTH + LEFT) / 2}" y="{HEIGHT - 4}" class="axis" text-anchor="middle">step</text>')
    coords = [at(x, y) for x, y, _, _ in points]
    parts.append('<polyline class="line" points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in coords) + '"/>')
    for (px, py), (_, _, link, tip) in zip(coords, points):
        parts.append(f'<a href="{escape(link)}" class="point"><circle cx="{px:.1f}" cy="{py:.1f}" r="5">'
                     f'<title>{escape(tip)}</title></circle></a>')
    parts.append("</svg>")
    return "".join(parts)
