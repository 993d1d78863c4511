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
    "a nested property changes its keys": [
        FIRST, _figure(_scatter("a", [1, 2], marker={"color": "#f00"}), *FIRST["data"][1:])],
    "the title loses a key": [
        {**FIRST, "layout": {"title": {"text": "t", "x": 0.2}}}, FIRST],
    "the title becomes a string": [FIRST, {**FIRST, "layout": {"title": "u"}}],
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


def _updates(first: dict[str, Any], then: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """Return the (trace index, properties) of each ``update`` the updater makes on the way
    from ``first`` to ``then``."""
    widget = go.FigureWidget()
    updater = FigureUpdater(widget, lambda *args: None)
    updater.show(first)
    made: list[tuple[int, dict[str, Any]]] = []
    original = go.Scatter.update

    def recorded(trace: go.Scatter, changed: dict[str, Any], **kwargs: Any) -> Any:
        made.append((widget.data.index(trace), changed))
        return original(trace, changed, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(go.Scatter, "update", recorded)
        updater.show(then)
    return made


def _names(updates: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, list[str]]]:
    return [(index, sorted(changed)) for index, changed in updates]


def test_a_trace_gets_only_the_properties_that_differ() -> None:
    labels = np.asarray(["one", "two"], dtype=object)
    same = _figure(_scatter("a", [1.0, np.nan], marker={"size": 5}, customdata=[[1, "x"]],
                            hovertext=labels, text=[3, 4]))
    assert _updates(same, same) == []
    as_array = _figure(_scatter("a", [1.0, np.nan], marker={"size": 5}, customdata=[[1, "x"]],
                                hovertext=labels.copy(), text=np.asarray([3, 4])))
    assert _updates(same, as_array) == []
    one_label = _figure(_scatter("a", [1.0, np.nan], marker={"size": 5}, customdata=[[1, "x"]],
                                 hovertext=labels, text=[3, 4], hoverinfo=["x"]))
    assert _names(_updates(one_label, {**one_label, "data": [
        {**one_label["data"][0], "hoverinfo": "x"}]})) == [(0, ["hoverinfo"])]
    floats = _figure(_scatter("a", [1.0, 2.0]))
    assert _names(_updates(floats, _figure(_scatter("a", [1, 2])))) == [(0, ["x"])]
    extra = {"hovertext": labels, "text": [3, 4]}
    nan_moved = _figure(_scatter("a", [np.nan, 1.0], marker={"size": 5}, customdata=[[1, "x"]],
                                 **extra))
    assert _names(_updates(same, nan_moved)) == [(0, ["x"])]
    grown = _figure(_scatter("a", [1.0, np.nan, 2.0], marker={"size": 5},
                             customdata=[[1, "x"]], **extra))
    assert _names(_updates(same, grown)) == [(0, ["x", "y"])]
    as_ints = _figure(_scatter("a", [1, 2], marker={"size": 5}, customdata=[[1, "x"]], **extra))
    assert _names(_updates(same, as_ints)) == [(0, ["x"])]  # another dtype kind
    deeper = _figure(_scatter("a", [1.0, np.nan], marker={"size": 6}, customdata=[[1, "y"]],
                              **extra))
    assert _names(_updates(same, deeper)) == [(0, ["customdata", "marker"])]
    fewer = _figure(_scatter("a", [1.0, np.nan], marker={"size": 5}, customdata=[[1]], **extra))
    assert _names(_updates(same, fewer)) == [(0, ["customdata"])]
    plain = _figure(_scatter("a", [1.0, np.nan]))
    assert _updates(same, plain) == [
        (0, {"marker": None, "customdata": None, "hovertext": None, "text": None})]
