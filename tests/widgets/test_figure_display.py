"""The figure inside the explorer's box: its whole state is synced when the box is displayed,
and its width follows the width the browser reports for its column."""

from __future__ import annotations

import plotly.graph_objects as go
from widget_ledgers import SEMANTIC

import ledgerviz
from ledgerviz.widgets.figure_display import MIN_WIDTH, FitWidth, sync_figure_state


def test_a_figure_changed_after_creation_has_its_traces_in_its_synced_state() -> None:
    figure = go.FigureWidget()
    figure.add_traces([go.Scatter(x=[1, 2], y=[3, 4], name="a"), go.Bar(x=[1], y=[2])])
    figure.update_layout(height=450, title_text="t")
    assert figure._widget_data == []  # what a browser building its model late would draw
    sync_figure_state(figure)
    assert [trace["type"] for trace in figure._widget_data] == ["scatter", "bar"]
    assert list(figure._widget_data[0]["x"]) == [1, 2]
    assert figure._widget_layout["height"] == 450
    assert figure._widget_layout["title"]["text"] == "t"


def test_displaying_the_explorer_syncs_its_figure() -> None:
    explorer = ledgerviz.explore(ledgerviz.load(SEMANTIC))
    explorer._repr_mimebundle_()
    assert len(explorer.figure._widget_data) == len(explorer.figure.data) > 0
    assert explorer.figure._widget_layout["height"] == explorer.figure.layout.height


def test_the_figure_takes_the_reported_column_width() -> None:
    figure = go.FigureWidget()
    fit = FitWidth(figure)
    fit.width = 1068
    assert figure.layout.width == 1068
    fit.width = 640
    assert figure.layout.width == 640
    fit.width = MIN_WIDTH - 1  # a collapsed output keeps the width it had
    assert figure.layout.width == 640


def test_the_explorer_keeps_a_width_reporter_beside_its_figure() -> None:
    explorer = ledgerviz.explore(ledgerviz.load(SEMANTIC))
    column = list(explorer.children)
    reporter = column[column.index(explorer.figure) + 1]
    assert isinstance(reporter, FitWidth) and reporter.figure is explorer.figure
    assert "lv-explorer" in explorer._dom_classes
