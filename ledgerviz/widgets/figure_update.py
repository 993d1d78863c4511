"""Update a plotly FigureWidget in place from a figure dict, sending only what changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.graph_objects as go


def _same(old: Any, new: Any) -> bool:
    """Return whether two trace or layout property values are equal (arrays element-wise)."""
    if isinstance(old, np.ndarray) or isinstance(new, np.ndarray):
        left, right = np.asarray(old), np.asarray(new)
        if left.shape != right.shape or left.dtype.kind != right.dtype.kind:
            return False
        if left.dtype.kind == "f":
            return bool(np.array_equal(left, right, equal_nan=True))
        return bool(np.array_equal(left, right))
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same(old[k], new[k]) for k in old)
    if isinstance(old, list | tuple) and isinstance(new, list | tuple):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
    return bool(old == new)


def _changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Return the top-level properties of ``new`` that differ from ``old``."""
    return {key: value for key, value in new.items()
            if key not in old or not _same(old[key], value)}


class FigureUpdater:
    """Keeps a FigureWidget showing the latest figure dict, changing only what differs.

    Traces of the same number, types and properties are updated property by property in one
    ``batch_update``; otherwise the trace list is replaced. ``on_click`` is attached to every
    trace the widget holds.
    """

    def __init__(self, widget: go.FigureWidget, on_click: Callable[..., Any]) -> None:
        self.widget = widget
        self._on_click = on_click
        self._shown: dict[str, Any] = {"data": [], "layout": {}}

    def show(self, figure: dict[str, Any]) -> None:
        """Make the widget show ``figure`` (``data``: trace dicts, ``layout``: a dict)."""
        old_data, new_data = self._shown["data"], figure["data"]
        same_traces = len(old_data) == len(new_data) and all(
            a.get("type") == b.get("type") and a.keys() == b.keys()
            for a, b in zip(old_data, new_data, strict=True))
        layout = _changes(self._shown["layout"], figure["layout"])
        with self.widget.batch_update():
            if same_traces:
                for trace, old, new in zip(self.widget.data, old_data, new_data, strict=True):
                    changed = _changes(old, new)
                    if changed:
                        trace.update(changed, overwrite=True)
            else:
                self.widget.data = ()
                self.widget.add_traces(new_data)
                for trace in self.widget.data:
                    trace.on_click(self._on_click)
            if layout:
                self.widget.update_layout(layout, overwrite=True)
        self._shown = figure
