"""Show a plotly FigureWidget inside a box of widgets as whole and as wide as it shows alone.

plotly's FigureWidget (an anywidget since plotly 6) has two habits that break it inside a box:

- it sends the traces and layout changes made after it was created as one-off messages, and
  copies its whole figure into its synced state only when it is displayed itself; a child of a
  box is never displayed itself, so its synced state (what a page restoring saved widget state
  draws, and what a view built before plotly's browser code listens to those messages starts
  from) stays the empty figure it was created with. :func:`sync_figure_state` copies the
  figure in, for the box to call when it is displayed (and for ``LiveFigure``, in
  ``live_figure``, to call when a view asks);
- it draws itself before the notebook attaches it to the page, when it has no width yet, so it
  takes plotly's default of 700 px, and nothing makes it lay itself out again when its output
  gets wider or narrower. :class:`FitWidth`, an invisible widget placed beside the figure,
  reports the column's width from the browser, and the kernel sets the figure's width to it.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import anywidget
import plotly.graph_objects as go
import traitlets

MIN_WIDTH = 200
"""Narrower columns (a collapsed or hidden output) leave the figure's width as it is."""

_ESM = """
export default {
  render({ model, el }) {
    el.style.height = "0";
    const drawn = () => {
      const plot = el.parentElement && el.parentElement.querySelector(":scope > .js-plotly-plot");
      return plot !== null && plot.querySelector(".main-svg") !== null;
    };
    let queued = false;
    const report = () => {
      if (queued || !drawn()) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        const width = Math.floor(el.clientWidth);
        if (width >= MIN_WIDTH && Math.abs(width - model.get("width")) > 1) {
          model.set("width", width);
          model.save_changes();
        }
      });
    };
    document.addEventListener("plotlywidget-after-render", report);
    const observer = new ResizeObserver(report);
    observer.observe(el);
    return () => {
      observer.disconnect();
      document.removeEventListener("plotlywidget-after-render", report);
    };
  },
};
""".replace("MIN_WIDTH", str(MIN_WIDTH))


class FitWidth(anywidget.AnyWidget):
    """An invisible widget that sets ``figure``'s layout width to the width of the column it
    is placed in (so place it in the figure's column), as the browser reports it."""

    _esm = _ESM
    width = traitlets.Int(0).tag(sync=True)
    """The column's width in CSS pixels, as the browser last reported it (0: not yet)."""

    def __init__(self, figure: go.FigureWidget, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.figure = figure
        self.observe(self._fit, names="width")

    def _fit(self, change: dict[str, Any]) -> None:
        if change["new"] >= MIN_WIDTH:
            self.figure.layout.width = change["new"]


def sync_figure_state(figure: go.FigureWidget) -> None:
    """Copy ``figure``'s traces and layout into its synced widget state, as plotly does when a
    FigureWidget is displayed on its own (so a browser that missed the incremental messages
    still draws it whole)."""
    figure._widget_layout = deepcopy(figure._layout_obj._props)
    figure._widget_data = deepcopy(figure._data)
