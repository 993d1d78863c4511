"""WebGL trace builders: many bars or markers in one trace, separated by None gaps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go


def interleave(starts: Sequence[Any], ends: Sequence[Any]) -> np.ndarray:
    """Return ``start, end, None`` triples flattened: one line segment per item."""
    out = np.empty(3 * len(starts), dtype=object)
    out[0::3] = starts
    out[1::3] = ends
    out[2::3] = None
    return out


def bars(
    name: str,
    starts: Sequence[Any],
    ends: Sequence[Any],
    y: float,
    hover: Sequence[str],
    color: str,
    *,
    width: float,
    legendgroup: str | None = None,
    showlegend: bool = True,
    opacity: float = 1.0,
    end_markers: bool = False,
) -> go.Scattergl:
    """Return one WebGL trace drawing a horizontal bar per item from ``starts`` to ``ends``."""
    n = len(starts)
    ys = interleave([y] * n, [y] * n)
    return go.Scattergl(
        name=name,
        x=interleave(starts, ends),
        y=ys,
        mode="lines+markers" if end_markers else "lines",
        line={"color": color, "width": width},
        marker={"color": color, "size": width * 0.9, "symbol": "circle"},
        hovertext=interleave(hover, hover),
        hoverinfo="text",
        legendgroup=legendgroup or name,
        showlegend=showlegend,
        opacity=opacity,
        connectgaps=False,
    )


def markers(
    name: str,
    xs: Sequence[Any],
    y: float,
    hover: Sequence[str],
    color: str,
    *,
    symbol: str = "circle",
    size: float = 9,
    legendgroup: str | None = None,
    showlegend: bool = True,
    opacity: float = 1.0,
) -> go.Scattergl:
    """Return one WebGL trace drawing a marker per item at ``xs`` on lane ``y``."""
    return go.Scattergl(
        name=name,
        x=np.asarray(xs, dtype=object),
        y=np.full(len(xs), y, dtype=float),
        mode="markers",
        marker={"color": color, "size": size, "symbol": symbol,
                "line": {"width": 1, "color": "white"}},
        hovertext=list(hover),
        hoverinfo="text",
        legendgroup=legendgroup or name,
        showlegend=showlegend,
        opacity=opacity,
    )
