"""The notebook diff explorer: two sessions' aligned timeline, a picker of the rows that
differ, and the two events of the chosen row side by side."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from ledgerviz.compare.session_diff import KIND_WORDS
from ledgerviz.display.fragments import fragment_style
from ledgerviz.html import escape
from ledgerviz.plot.diff_timeline import diff_timeline_spec
from ledgerviz.widgets.figure_display import FitWidth, sync_figure_state
from ledgerviz.widgets.live_figure import LiveFigure

if TYPE_CHECKING:
    from plotly.callbacks import Points

    from ledgerviz.compare import DiffSide, SessionDiff

HALF = {"width": "50%", "min_width": "320px"}
PICKER_LIMIT = 400
"""Differing rows the picker lists (the first ones); any row can be clicked in the figure."""
EVENT_TEXT_LIMIT = 20_000
"""Characters of an event's JSON a pane shows."""


class DiffExplorer(widgets.VBox):
    """An ipywidgets box exploring a :class:`~ledgerviz.compare.SessionDiff`.

    ``summary`` (HTML: where the sessions part and the counts), ``figure`` (the aligned
    timeline; clicking a point picks its row), ``row`` (Dropdown of the first
    :data:`PICKER_LIMIT` differing rows), ``a_event`` and ``b_event`` (HTML panes: the
    chosen row's event on each side, every ledger string escaped).
    """

    def __init__(self, diff: SessionDiff) -> None:
        self.diff = diff
        self.summary = widgets.HTML(_verdict(diff))
        self.figure = LiveFigure(diff_timeline_spec(diff))
        for trace in self.figure.data:
            trace.on_click(self._on_click)
        differing = [n for n, kind in enumerate(diff.kinds) if kind != "same"]
        self.row = widgets.Dropdown(
            options=[(_row_label(diff, n), n) for n in differing[:PICKER_LIMIT]],
            description="Row", layout=widgets.Layout(width="95%"))
        self.a_event = widgets.HTML()
        self.b_event = widgets.HTML()
        super().__init__(children=[
            widgets.HTML(fragment_style()),
            self.summary,
            self.figure,
            FitWidth(self.figure),
            self.row,
            widgets.HBox([widgets.VBox([self.a_event], layout=HALF),
                          widgets.VBox([self.b_event], layout=HALF)]),
        ])
        self.row.observe(lambda change: self.show(change["new"]), names="value")
        self.show(differing[0] if differing else 0)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """Return the widget's display, the figure's whole state included."""
        sync_figure_state(self.figure)
        return super()._repr_mimebundle_(**kwargs)

    def show(self, row: int | None) -> None:
        """Show the events of alignment row ``row`` (none when out of range)."""
        rows = self.diff.rows
        i, j = rows[row] if row is not None and 0 <= row < len(rows) else (None, None)
        self.a_event.value = _event_html("a", self.diff.a, i)
        self.b_event.value = _event_html("b", self.diff.b, j)
        if any(value == row for _, value in self.row.options):
            self.row.value = row

    def _on_click(self, _trace: Any, points: Points, _state: Any) -> None:
        for x in points.xs:
            if isinstance(x, int | float) and math.isfinite(x):
                self.show(round(x))
                return


def _verdict(diff: SessionDiff) -> str:
    """Return the summary line (escaped)."""
    if diff.same:
        return escape(diff.divergence_text())
    return (f"first divergence at <b>{escape(diff.divergence_text())}</b> · "
            f"{escape(diff.counts_text())}")


def _row_label(diff: SessionDiff, row: int) -> str:
    """Return a picker label (plain text): the row, its kind, each side's event, what
    differs."""
    i, j = diff.rows[row]
    sides = [f"{name} {side.where(k)}"
             for name, side, k in (("a", diff.a, i), ("b", diff.b, j)) if k is not None]
    differs = ", ".join(diff.differs(row))
    return (f"row {row}: {KIND_WORDS[diff.kinds[row]]} · {' / '.join(sides)}"
            f"{f' ({differs})' if differs else ''}")


def _event_html(name: str, side: DiffSide, index: int | None) -> str:
    """Return a pane with ``side``'s event ``index`` as escaped, pretty-printed JSON."""
    title = f"<b>{name}: {escape(side.key, 80)}</b>"
    if index is None:
        return f"<div class='lv-details'>{title}<p class='lv-none'>no event on this side</p></div>"
    event = side.ledger.sessions[0].events[index]
    pretty = json.dumps(event, indent=2, ensure_ascii=False, default=str)
    return (f"<div class='lv-details'>{title}<div>{escape(side.where(index))}</div>"
            "<pre style='max-height:24em;overflow:auto;white-space:pre-wrap;margin:4px 0'>"
            f"{escape(pretty, EVENT_TEXT_LIMIT)}</pre></div>")
