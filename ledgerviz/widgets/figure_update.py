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


WHOLE = frozenset({"template", "meta"})
"""Layout properties replaced whole when they change: plotly validates a template as one,
and ``meta`` is free data, not a plotly object with paths inside."""


def _layout_changes(old: dict[str, Any], new: dict[str, Any], prefix: str = ""
                    ) -> dict[str, Any]:
    """Return what differs from ``old`` in ``new`` as paths to the deepest dicts both hold
    (``xaxis.range``, not ``xaxis``), None for a property ``new`` lacks: a redraw then sends
    only those, never a property the browser set and the kernel holds already (the x range
    a reader zoomed to)."""
    changes: dict[str, Any] = {}
    for key in [*new, *(k for k in old if k not in new)]:
        path = prefix + key
        if key not in new:
            changes[path] = None
        elif (key not in WHOLE and isinstance(old.get(key), dict)
              and isinstance(new[key], dict)):
            changes |= _layout_changes(old[key], new[key], path + ".")
        elif key not in old or not _same(old[key], new[key]):
            changes[path] = new[key]
    return changes


def _same_types_before(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> int:
    """Return how many first traces of ``old`` and ``new`` are pairwise of one type."""
    pairs = enumerate(zip(old, new, strict=False))
    return next((i for i, (a, b) in pairs if a.get("type") != b.get("type")),
                min(len(old), len(new)))


class FigureUpdater:
    """Keeps a FigureWidget showing the latest figure dict, changing only what differs.

    Trace ``i`` of the new figure updates the widget's trace ``i`` in place when both are of
    one type (only the properties that differ are sent; a property the new trace lacks is
    unset); the traces from the first of another type on are replaced, and traces are added
    or dropped at the end, all in one ``batch_update``; layout properties are set at the
    deepest path that changed. ``on_click`` is attached to every trace the widget holds.
    """

    def __init__(self, widget: go.FigureWidget, on_click: Callable[..., Any]) -> None:
        self.widget = widget
        self._on_click = on_click
        self._shown: dict[str, Any] = {"data": [], "layout": {}}

    def show(self, figure: dict[str, Any]) -> None:
        """Make the widget show ``figure`` (``data``: trace dicts, ``layout``: a dict)."""
        old_data, new_data = self._shown["data"], figure["data"]
        kept = _same_types_before(old_data, new_data)
        layout = _layout_changes(self._shown["layout"], figure["layout"])
        with self.widget.batch_update():
            for trace, old, new in zip(self.widget.data, old_data[:kept], new_data, strict=False):
                changed = {**dict.fromkeys(old.keys() - new.keys()), **_changes(old, new)}
                if changed:
                    trace.update(changed, overwrite=True)
            if kept < len(old_data):
                self.widget.data = self.widget.data[:kept]
            if kept < len(new_data):
                self.widget.add_traces(new_data[kept:])
                for trace in self.widget.data[kept:]:
                    trace.on_click(self._on_click)
            for path, value in layout.items():
                self.widget.layout[path] = value
        self._shown = figure
