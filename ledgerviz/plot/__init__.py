"""Plotly figures of session ledgers (pure functions returning ``go.Figure``)."""

from ledgerviz.plot.crash_grid import crash_grid
from ledgerviz.plot.diff_timeline import diff_timeline
from ledgerviz.plot.timeline import timeline, timeline_figure

__all__ = ["crash_grid", "diff_timeline", "timeline", "timeline_figure"]
