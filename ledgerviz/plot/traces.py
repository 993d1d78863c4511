"""Trace specs: many bars or markers in one trace, separated by NaN gaps.

Traces are returned as plain dicts so the figure validates each once. A trace is SVG
(``scatter``) unless its point count needs WebGL (``scattergl``): browsers keep only a few
WebGL contexts alive (16 in Chromium), so a page of many small timelines must not use one each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

WEBGL_POINTS = 5_000


def trace_type(points: int) -> str:
    """Return ``scattergl`` for more than :data:`WEBGL_POINTS` points, else ``scatter`` (SVG)."""
    return "scattergl" if points > WEBGL_POINTS else "scatter"


def interleave(starts: Sequence[float], ends: Sequence[float]) -> np.ndarray:
    """Return ``start, end, NaN`` triples flattened into one float array: one segment per item
    (see :func:`compact`)."""
    out = np.full(3 * len(starts), np.nan)
    out[0::3] = starts
    out[1::3] = ends
    return compact(out)


def compact(values: np.ndarray) -> np.ndarray:
    """Return float ``values`` as ``float32`` when that holds every one exactly (seqs and
    lanes: half the bytes sent to a browser), else unchanged (epoch milliseconds)."""
    narrow = values.astype(np.float32)
    return narrow if ((narrow == values) | np.isnan(values)).all() else values


def _labels_at_starts(hover: Sequence[str]) -> np.ndarray:
    out = np.full(3 * len(hover), "", dtype=object)
    out[0::3] = hover
    return out


def bars(
    name: str,
    starts: Sequence[float],
    ends: Sequence[float],
    y: float | np.ndarray,
    hover: Sequence[str],
    color: str,
    *,
    width: float,
    legendgroup: str | None = None,
    showlegend: bool = True,
    opacity: float = 1.0,
    end_markers: bool = False,
) -> dict[str, Any]:
    """Return a trace drawing a horizontal bar per item from ``starts`` to ``ends``.

    ``y`` is the lane (one value) or one value per item.
    The hover label sits on each bar's start point, so the figure carries it once.
    """
    ys = np.broadcast_to(np.asarray(y, dtype=float), (len(starts),))
    return {
        "type": trace_type(3 * len(starts)),
        "name": name,
        "x": interleave(starts, ends),
        "y": interleave(ys, ys),
        "mode": "lines+markers" if end_markers else "lines",
        "line": {"color": color, "width": width},
        "marker": {"color": color, "size": width * 0.9},
        "hovertext": _labels_at_starts(hover),
        "hoverinfo": "text",
        "legendgroup": legendgroup or name,
        "showlegend": showlegend,
        "opacity": opacity,
        "connectgaps": False,
    }


def markers(
    name: str,
    xs: Sequence[float],
    y: float | np.ndarray,
    hover: Sequence[str],
    color: str,
    *,
    symbol: str = "circle",
    size: float = 9,
    legendgroup: str | None = None,
    showlegend: bool = True,
    opacity: float = 1.0,
) -> dict[str, Any]:
    """Return a trace drawing a marker per item at ``xs`` on lane ``y``."""
    return {
        "type": trace_type(len(xs)),
        "name": name,
        "x": compact(np.asarray(xs, dtype=float)),
        "y": compact(np.broadcast_to(np.asarray(y, dtype=float), (len(xs),)).copy()),
        "mode": "markers",
        "marker": {"color": color, "size": size, "symbol": symbol,
                   "line": {"width": 1, "color": "white"}},
        "hovertext": np.asarray(hover, dtype=object),
        "hoverinfo": "text",
        "legendgroup": legendgroup or name,
        "showlegend": showlegend,
        "opacity": opacity,
    }
