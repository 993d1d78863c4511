"""Plotly figures of session ledgers (pure functions returning ``go.Figure``)."""

from ledgerviz.plot.timeline import timeline, timeline_figure

__all__ = ["timeline", "timeline_figure"]
