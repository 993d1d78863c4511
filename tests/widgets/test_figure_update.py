"""The explorer's in-place figure updates: the widget ends up as plotly draws the new figure."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

from ledgerviz.widgets.figure_update import FigureUpdater


def _scatter(name: str, xs: list[float], **props: Any) -> dict[str, Any]:
    return {"type": "scatter", "name": name, "x": np.asarray(xs), "y": np.ones(len(xs)), **props}


def _bar(name: str, xs: list[float]) -> dict[str, Any]:
    return {"type": "bar", "name": name, "x": np.asarray(xs), "y": np.ones(len(xs))}


def _figure(*traces: dict[str, Any], title: str = "t") -> dict[str, Any]:
    return {"data": list(traces), "layout": {"title": {"text": title}}}


FIRST = _figure(_scatter("a", [1, 2], marker={"size": 5}), _scatter("b", [3]),
                _bar("c", [4, 5]))
SEQUENCES = {
    "arrays change": [FIRST, _figure(_scatter("a", [1, 2, 3], marker={"size": 5}),
                                     _scatter("b", [3]), _bar("c", [6]), title="u")],
    "a property goes": [FIRST, _figure(_scatter("a", [1, 2]), _scatter("b", [3], opacity=0.5),
                                       _bar("c", [4, 5]))],
    "traces are added": [FIRST, _figure(*FIRST["data"], _scatter("d", [7]), _bar("e", [8]))],
    "traces are dropped": [FIRST, _figure(_scatter("a", [2]))],
    "a type changes midway": [FIRST, _figure(_scatter("a", [1]), _bar("b", [3]),
                                             _scatter("c", [4]), _scatter("d", [5]))],
    "back and forth": [FIRST, _figure(_scatter("x", [9])), FIRST],
}


def _drawn(figure: go.FigureWidget) -> dict[str, Any]:
    """The traces and title plotly.js gets (an unset compound property is an empty one; the
    widget's random trace uids left out)."""
    drawn = figure.to_dict()
    data = [{key: value for key, value in trace.items() if key != "uid" and value != {}}
            for trace in drawn["data"]]
    return {"data": data, "title": drawn["layout"].get("title")}


@pytest.mark.parametrize("name", SEQUENCES)
def test_the_widget_ends_as_a_new_widget_of_the_last_figure(name: str) -> None:
    widget = go.FigureWidget()
    clicked: list[Any] = []
    updater = FigureUpdater(widget, lambda *args: clicked.append(args))
    for figure in SEQUENCES[name]:
        updater.show(figure)
    last = SEQUENCES[name][-1]
    assert _drawn(widget) == _drawn(go.FigureWidget(last))
    assert all(trace._click_callbacks for trace in widget.data)


def test_traces_of_one_type_are_updated_in_place_sending_only_what_changed() -> None:
    widget = go.FigureWidget()
    updater = FigureUpdater(widget, lambda *args: None)
    updater.show(FIRST)
    traces = widget.data
    sent: list[tuple[Any, ...]] = []
    widget._send_update_msg = (  # type: ignore[method-assign]
        lambda **message: sent.append((message["restyle_data"], message["relayout_data"],
                                       message["trace_indexes"])))
    added: list[Any] = []
    widget._send_addTraces_msg = added.append  # type: ignore[method-assign]
    updater.show(_figure(FIRST["data"][0], _scatter("b", [30], opacity=0.5), FIRST["data"][2],
                         _scatter("d", [7])))
    assert widget.data[:3] == traces  # the same trace objects, none replaced
    ((restyle, relayout, indexes),) = sent
    assert indexes == [1] and sorted(restyle) == ["opacity", "x"] and relayout == {}
    assert list(restyle["x"][0]) == [30] and restyle["opacity"] == [0.5]
    ((new_trace,),) = added
    assert new_trace["name"] == "d"
