"""A small SVG sketch of a timeline figure: what a viewer running no script (an exported
notebook, GitHub's) shows of a live figure, with no plotly.js and no image renderer.

It draws what the figure shows in its x range: each line trace's segments (bars, the fork
line), each marker trace's markers, the shapes (turn bands, the abandoned span), the lane
names, a few x ticks and a legend. Items are placed on a pixel grid and an item falling on
an item of its trace already drawn is left out, so the sketch stays small at any size.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ledgerviz.html import escape

WIDTH = 1100
LEFT, RIGHT, TOP, BOTTOM = 130, 20, 10, 30
LANE_PX = 40
LEGEND_ROW = 18
TICKS = 6


class _Scale:
    """Data coordinates to pixels within the plot area."""

    def __init__(self, x_range: tuple[float, float], y_range: tuple[float, float],
                 height: int) -> None:
        self.x0, self.x1 = x_range
        self.y0, self.y1 = y_range
        self.height = height

    def x(self, value: float) -> float:
        span = (self.x1 - self.x0) or 1.0
        clipped = min(max(value, self.x0), self.x1)
        return LEFT + (clipped - self.x0) / span * (WIDTH - LEFT - RIGHT)

    def y(self, value: float) -> float:
        span = (self.y1 - self.y0) or 1.0
        return TOP + (self.y1 - value) / span * self.height

    def shows(self, low: float, high: float) -> bool:
        return high >= self.x0 and low <= self.x1


def _get(mapping: Mapping[str, Any] | None, *path: str) -> Any:
    for key in path:
        if not isinstance(mapping, Mapping):
            return None
        mapping = mapping.get(key)
    return mapping


def _floats(values: Any) -> np.ndarray:
    """Return trace values as floats: a list, an array, or plotly's packed ``bdata``."""
    if isinstance(values, Mapping) and "bdata" in values:
        return np.frombuffer(base64.b64decode(values["bdata"]),
                             dtype=values.get("dtype", "f8")).astype(float)
    return np.asarray([] if values is None else values, dtype=float)


def _x_range(figure: Mapping[str, Any]) -> tuple[float, float]:
    """Return the figure's x range: its layout's, else the extent of its traces."""
    shown = _get(figure, "layout", "xaxis", "range")
    if shown is not None and len(shown) == 2:
        return float(shown[0]), float(shown[1])
    xs = np.concatenate([_floats(t.get("x")) for t in figure.get("data", [])] or [[0.0]])
    xs = xs[~np.isnan(xs)]
    return (float(xs.min()), float(xs.max())) if len(xs) else (0.0, 1.0)


def _segments(trace: Mapping[str, Any], scale: _Scale) -> Iterator[tuple[float, ...]]:
    """Yield the pixel ends of each segment of a line trace that shows in the x range."""
    xs, ys = _floats(trace.get("x")), _floats(trace.get("y"))
    for i in range(len(xs) - 1):
        a, b = xs[i], xs[i + 1]
        if math.isnan(a) or math.isnan(b) or math.isnan(ys[i]) or math.isnan(ys[i + 1]):
            continue
        if scale.shows(min(a, b), max(a, b)):
            yield scale.x(a), scale.y(ys[i]), scale.x(b), scale.y(ys[i + 1])


def _trace_svg(trace: Mapping[str, Any], scale: _Scale) -> tuple[str, int]:
    """Return a trace drawn as an SVG group, and how many items it holds."""
    mode = trace.get("mode") or "lines"
    color = escape(_get(trace, "line", "color") or _get(trace, "marker", "color") or "#888")
    drawn: set[tuple[int, ...]] = set()
    items = []
    if "lines" in mode:
        width = float(_get(trace, "line", "width") or 2)
        dash = ' stroke-dasharray="4 3"' if _get(trace, "line", "dash") else ""
        for x0, y0, x1, y1 in _segments(trace, scale):
            key = (round(x0), round(y0), round(x1), round(y1))
            if key not in drawn:
                drawn.add(key)
                items.append(f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" '
                             f'stroke-width="{width:g}"{dash}/>')
    elif "markers" in mode:
        radius = float(_get(trace, "marker", "size") or 8) / 2
        square = _get(trace, "marker", "symbol") in ("square", "diamond", "x")
        xs, ys = _floats(trace.get("x")), _floats(trace.get("y"))
        for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
            if math.isnan(x) or math.isnan(y) or not scale.shows(x, x):
                continue
            px, py = scale.x(x), scale.y(y)
            key = (round(px), round(py))
            if key in drawn:
                continue
            drawn.add(key)
            items.append(
                f'<rect x="{px - radius:.1f}" y="{py - radius:.1f}" width="{2 * radius:g}" '
                f'height="{2 * radius:g}"/>' if square
                else f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{radius:g}"/>')
    if not items:
        return "", 0
    paint = f'stroke="{color}" fill="none"' if "lines" in mode else f'fill="{color}"'
    opacity = float(trace.get("opacity", 1) or 1)
    return (f'<g data-trace="{escape(trace.get("name", ""))}" {paint} '
            f'opacity="{opacity:g}">{"".join(items)}</g>', len(items))


def _shapes_svg(shapes: Any, scale: _Scale) -> str:
    """Return the figure's full-height rectangles (bands) that show in the x range."""
    out = []
    for shape in shapes or ():
        if shape.get("type") != "rect" or shape.get("xref") != "x":
            continue
        low, high = sorted((float(shape["x0"]), float(shape["x1"])))
        if scale.shows(low, high):
            x0, x1 = scale.x(low), scale.x(high)
            out.append(f'<rect x="{x0:.1f}" y="{TOP}" width="{max(x1 - x0, 1):.1f}" '
                       f'height="{scale.height}" fill="{escape(shape.get("fillcolor", "#eee"))}"/>')
    return "".join(out)


def _ticks(scale: _Scale) -> str:
    """Return a few x tick labels, at whole numbers when the range is wide enough."""
    bottom = TOP + scale.height
    values = np.linspace(scale.x0, scale.x1, TICKS)
    if scale.x1 - scale.x0 >= TICKS:
        values = np.round(values)
    anchors = ["start", *["middle"] * (TICKS - 2), "end"]  # the end ticks stay inside
    return "".join(f'<text x="{scale.x(v):.1f}" y="{bottom + 16}" text-anchor="{anchor}">'
                   f"{v:,.0f}</text>" for v, anchor in zip(values.tolist(), anchors, strict=True))


def figure_svg(figure: Mapping[str, Any]) -> str:
    """Return an SVG sketch of a timeline figure dict (``data``, ``layout``) over its x range,
    every text in it escaped."""
    layout = figure.get("layout", {})
    y_range = _get(layout, "yaxis", "range") or [0.4, 4.6]
    lanes = max(1, round(float(y_range[1]) - float(y_range[0])))
    scale = _Scale(_x_range(figure), (float(y_range[0]), float(y_range[1])), lanes * LANE_PX)
    traces = [(trace, *_trace_svg(trace, scale)) for trace in figure.get("data", [])]
    legend: dict[str, str] = {}
    for trace, _svg, count in traces:
        name = trace.get("name") or ""
        if count and name not in legend:
            legend[name] = _get(trace, "line", "color") or _get(trace, "marker", "color") or "#888"
    labels = zip(_get(layout, "yaxis", "tickvals") or [],
                 _get(layout, "yaxis", "ticktext") or [], strict=False)
    lane_names = "".join(f'<text x="{LEFT - 8}" y="{scale.y(float(v)) + 4:.1f}" '
                         f'text-anchor="end">{escape(text)}</text>' for v, text in labels)
    per_row = 4
    rows = [list(legend.items())[i:i + per_row] for i in range(0, len(legend), per_row)]
    top = TOP + scale.height + BOTTOM
    keys = "".join(
        f'<rect x="{LEFT + j * 240}" y="{top + i * LEGEND_ROW - 9}" width="14" height="8" '
        f'fill="{escape(color)}"/><text x="{LEFT + j * 240 + 20}" y="{top + i * LEGEND_ROW}">'
        f"{escape(name)}</text>"
        for i, row in enumerate(rows) for j, (name, color) in enumerate(row))
    height = top + len(rows) * LEGEND_ROW + 4
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
            f'width="100%" style="max-width:{WIDTH}px;font:11px sans-serif" role="img">'
            f"{_shapes_svg(layout.get('shapes'), scale)}"
            f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
            f'height="{scale.height}" fill="none" stroke="#ccd"/>'
            f"{''.join(svg for _trace, svg, _count in traces)}{lane_names}{_ticks(scale)}"
            f"{keys}</svg>")
