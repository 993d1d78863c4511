"""Figures in the HTML report: each is a placeholder div plus its spec as inline JSON, drawn by
the page script (``report/report.js``) when it scrolls into view; plotly.js is embedded once
(the smallest bundle that draws every figure: :mod:`ledgerviz.report.plotlyjs`), packed
(:mod:`ledgerviz.report.pack`), and started only when the first figure is drawn."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Any

import numpy as np
import orjson

from ledgerviz.plot.timeline import TEMPLATE
from ledgerviz.report.pack import packed_script
from ledgerviz.report.plotlyjs import PlotlyJs, plotlyjs_for

DEFAULT_HEIGHT = 450
"""plotly's figure height when the layout names none."""


_SCRIPT_SAFE = (("<", "\\u003c"), (">", "\\u003e"), ("/", "\\u002f"),
                ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))
"""What a figure's JSON escapes, as plotly's own JSON does: no text can end the script."""


def _script_json(value: Any) -> str:
    """Return ``value`` (plain values and numpy arrays) as JSON safe inside a script element.

    The same text as plotly's ``to_json``, without its per-value cleaning pass: numpy arrays
    of numbers are encoded by orjson as they are, others (hover texts) as their lists.
    """
    text = orjson.dumps(value, default=_encodable,
                        option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY).decode()
    for unsafe, escaped in _SCRIPT_SAFE:
        text = text.replace(unsafe, escaped)
    return text


def _encodable(value: Any) -> Any:
    """Return a numpy array orjson does not encode as it is: numbers made contiguous, any
    other kind (the hover texts' objects) as a list."""
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value) if value.dtype.kind in "biuf" else value.tolist()
    raise TypeError(type(value).__name__)  # orjson says what it cannot encode


def figure_html(figure: dict[str, Any], name: str) -> str:
    """Return the placeholder of a timeline figure dict (sized to its height) and its JSON.

    ``name`` makes the element ids, so the same report input gives the same bytes. The
    layout's template is left out: the page holds it once (:func:`page_scripts`).
    """
    layout = {k: _report_axis(v) if k.startswith(("xaxis", "yaxis")) else v
              for k, v in figure["layout"].items() if k != "template"}
    spec = _script_json({"data": figure["data"], "layout": layout})
    webgl = ' data-webgl="1"' if "scattergl" in trace_types(figure) else ""
    return (f'<div class="lv-plot" id="plot-{name}" data-figure="figure-{name}"{webgl}'
            f' style="height:{figure_height(figure)}px">'
            "<noscript><p class='meta'>The timeline needs JavaScript.</p></noscript></div>"
            f'<script type="application/json" id="figure-{name}">{spec}</script>')


def _report_axis(axis: dict[str, Any]) -> dict[str, Any]:
    """Return a figure's axis as the report draws it: its tick labels allowed past the plot's
    edge (the margins keep them inside), which spares plotly re-measuring every label of the
    axis once per label (a quarter of the page's drawing time for the examples)."""
    return {**axis, "ticklabeloverflow": "allow"}


def figure_height(figure: dict[str, Any]) -> int:
    """Return the height of a figure dict in pixels."""
    return int(figure["layout"].get("height", DEFAULT_HEIGHT))


def trace_types(figure: dict[str, Any]) -> set[str]:
    """Return the trace types of a figure dict (plotly's default type is ``scatter``)."""
    return {trace.get("type", "scatter") for trace in figure["data"]}


def plotlyjs_label(types: frozenset[str]) -> str:
    """Return what the report's footer calls the plotly.js a page of ``types`` embeds."""
    return plotlyjs_for(types).label


def page_scripts(types: frozenset[str]) -> str:
    """Return the report's scripts for figures of trace ``types``: the figures' template,
    plotly.js packed, then the page behaviour (unpacking, lazy drawing, table sorting)."""
    return _page_scripts(plotlyjs_for(types))


@cache
def _page_scripts(plotlyjs: PlotlyJs) -> str:
    import plotly.io as pio

    behaviour = files(__package__).joinpath("report.js").read_text(encoding="utf-8")
    template = _script_json(pio.templates[TEMPLATE].to_plotly_json())
    return (f'<script type="application/json" id="lv-template">{template}</script>'
            f'{packed_script("lv-plotly", plotlyjs.code)}'
            f"<script>{behaviour}</script>")
