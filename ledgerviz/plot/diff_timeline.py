"""The diff timeline: two sessions in aligned lanes, the divergence point marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ledgerviz.html import plotly_text
from ledgerviz.plot import style
from ledgerviz.plot.static import StaticFallbackFigure
from ledgerviz.plot.traces import bars, markers
from ledgerviz.wording import counted

if TYPE_CHECKING:
    from ledgerviz.compare import SessionDiff

STRETCH_BANDS_LIMIT = 200
"""Unmatched stretches shaded in the background, at most (the markers show every one)."""

LANES = {"a": 2.0, "b": 1.0}


def diff_timeline_spec(diff: SessionDiff) -> dict[str, Any]:
    """Return the diff timeline as a plotly figure dict (``data``, ``layout``).

    The x axis is the alignment row: an aligned pair sits at one x on both lanes, an event
    of one side only has nothing across from it. Runs of equal events are grey bars;
    changed pairs, and events of one side only, are markers; the stretches that differ are
    shaded and the first divergence is a dashed line.
    """
    runs = _runs(diff.kinds)
    traces = _same_traces(diff, [run for run in runs if run[2] == "same"])
    for kind in ("changed", "a_only", "b_only"):
        rows = [n for n, row_kind in enumerate(diff.kinds) if row_kind == kind]
        for side in ("a", "b"):
            if rows and kind != ("b_only" if side == "a" else "a_only"):
                traces.append(markers(
                    style.DIFF_LEGEND[kind], rows, LANES[side],
                    [_hover(diff, row) for row in rows], style.DIFF_COLOR[kind],
                    symbol="diamond" if kind == "changed" else "square", size=10,
                    legendgroup=kind, showlegend=side == "a" or kind == "b_only"))
    stretches = [run for run in runs if run[2] != "same"]
    shapes = [_band(lo - 0.5, hi - 0.5) for lo, hi, _ in stretches[:STRETCH_BANDS_LIMIT]]
    first = next((lo for lo, _, kind in runs if kind != "same"), None)
    annotations = []
    if first is not None:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": first - 0.5,
                       "x1": first - 0.5, "y0": 0, "y1": 1,
                       "line": {"color": style.FORK_COLOR, "width": 2, "dash": "dash"}})
        annotations.append({"x": first - 0.5, "y": 1, "xref": "x", "yref": "paper",
                            "text": _divergence_label(diff), "showarrow": False,
                            "xanchor": "left", "yanchor": "bottom",
                            "font": {"color": style.FORK_COLOR, "size": 11}})
    return {"data": traces, "layout": _layout(diff, shapes, annotations)}


def diff_timeline(diff: SessionDiff) -> StaticFallbackFigure:
    """Return :func:`diff_timeline_spec` as a figure with a static fallback in notebooks."""
    return StaticFallbackFigure(diff_timeline_spec(diff))


def _runs(kinds: Sequence[str]) -> list[tuple[int, int, str]]:
    """Return ``(first row, stop row, kind)`` of each maximal run of rows; every kind but
    ``same`` counts as one (a differing stretch)."""
    runs: list[tuple[int, int, str]] = []
    for row, kind in enumerate(kinds):
        label = "same" if kind == "same" else "differs"
        if runs and runs[-1][2] == label:
            runs[-1] = (runs[-1][0], row + 1, label)
        else:
            runs.append((row, row + 1, label))
    return runs


def _same_traces(diff: SessionDiff, runs: list[tuple[int, int, str]]) -> list[dict[str, Any]]:
    """Return a grey bar per run of equal events on each lane."""
    traces = []
    for side, seqs, column in (("a", diff.a.seqs, 0), ("b", diff.b.seqs, 1)):
        hover = [f"<b>{counted(hi - lo, 'equal event')}</b><br>{side} seqs "
                 f"{plotly_text(seqs[diff.rows[lo][column]])}–"
                 f"{plotly_text(seqs[diff.rows[hi - 1][column]])}" for lo, hi, _ in runs]
        traces.append(bars(style.DIFF_LEGEND["same"], [lo - 0.4 for lo, _, _ in runs],
                           [hi - 0.6 for _, hi, _ in runs], LANES[side], hover,
                           style.DIFF_COLOR["same"], width=8, legendgroup="same",
                           showlegend=side == "a"))
    return traces


def _hover(diff: SessionDiff, row: int) -> str:
    """Return the hover label of one differing row."""
    i, j = diff.rows[row]
    parts = [f"<b>{style.DIFF_LEGEND[diff.kinds[row]]}</b>"]
    for name, side, index in (("a", diff.a, i), ("b", diff.b, j)):
        if index is not None:
            parts.append(f"{name}: {plotly_text(side.where(index), 120)}")
    differs = diff.differs(row)
    if differs:
        parts.append(f"differs: {plotly_text(', '.join(differs))}")
    return "<br>".join(parts)


def _divergence_label(diff: SessionDiff) -> str:
    """Return the label of the first divergence line."""
    first = diff.first_divergence
    assert first is not None
    return (f"first divergence · a seq {plotly_text(first.a_seq)}, b seq "
            f"{plotly_text(first.b_seq)}")


def _band(x0: float, x1: float) -> dict[str, Any]:
    """Return a full-height background rectangle over one differing stretch."""
    return {"type": "rect", "xref": "x", "yref": "paper", "x0": x0, "x1": x1, "y0": 0,
            "y1": 1, "fillcolor": style.UNMATCHED_FILL, "line": {"width": 0}, "layer": "below"}


def _layout(diff: SessionDiff, shapes: list[dict[str, Any]],
            annotations: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the figure layout: two lanes named by session, the alignment row axis."""
    counts = diff.counts()
    verdict = "the same" if diff.same else (
        f"{counts['changed']} changed · {counts['a_only']} only in a · "
        f"{counts['b_only']} only in b")
    title = (f"Diff of {plotly_text(diff.a.key, 60)} and {plotly_text(diff.b.key, 60)}"
             f"<br><sup>{counted(len(diff.rows), 'aligned row')} · {verdict}</sup>")
    return {
        "template": "plotly_white",
        "title": {"text": title, "x": 0, "xanchor": "left"},
        "height": 300,
        "margin": {"l": 10, "r": 10, "t": 80, "b": 60},
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        "legend": {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0,
                   "x": 0, "font": {"size": 11}},
        "shapes": shapes,
        "annotations": annotations,
        "yaxis": {"tickvals": list(LANES.values()),
                  "ticktext": [f"a: {plotly_text(diff.a.key, 30)}",
                               f"b: {plotly_text(diff.b.key, 30)}"],
                  "range": [0.4, 2.6], "showgrid": False, "zeroline": False,
                  "fixedrange": True, "automargin": True},
        "xaxis": {"title": {"text": "aligned row"}, "showgrid": True, "gridcolor": "#eef1f4",
                  "zeroline": False},
    }
