"""Plotly figures of session ledgers (pure functions returning ``go.Figure``)."""

from ledgerviz.plot.crash_grid import crash_grid
from ledgerviz.plot.timeline import timeline, timeline_figure

__all__ = ["crash_grid", "timeline", "timeline_figure"]
