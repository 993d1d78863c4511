"""The diff timeline: lanes, markers where the sessions differ, the divergence line, and
ledger text escaped."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

import ledgerviz as lv
from ledgerviz.plot import style
from tests.compare.pairs import example, write

HOSTILE = '<img src=x onerror="alert(1)">'


def _pair(tmp_path: Path) -> lv.SessionDiff:
    """Return the diff of tool-error with a copy whose seq 9 result differs and whose seq
    12-13 (an answer and its step end) are gone, under a hostile session id and type."""
    header, events = example("tool-error.jsonl")
    other = copy.deepcopy(events)
    other[9]["data"]["message"]["content"][0]["text"] = "changed"
    other[4]["type"] = HOSTILE  # the request/header, now an unknown type
    del other[12:14]
    a = write(tmp_path / "a.jsonl", header, events)
    return lv.diff(a, write(tmp_path / "b.jsonl", {**header, "id": HOSTILE}, other))


def _trace(figure: object, name: str, lane: float) -> object:
    return next(t for t in figure.data  # type: ignore[attr-defined]
                if t.name == name and float(np.nanmin(np.asarray(t.y, dtype=float))) == lane)


def test_markers_sit_on_the_aligned_rows(tmp_path: Path) -> None:
    diff = _pair(tmp_path)
    figure = lv.timeline(diff)
    # rows: 0-3 equal; 4 a's seq 4 and 5 b's (types differ: no pair); 6-9 equal; 10 the
    # changed result; 11-12 equal; 13-14 a's seqs 12-13; then equal to the end
    assert list(_trace(figure, style.DIFF_LEGEND["changed"], 2.0).x) == [10]
    assert list(_trace(figure, style.DIFF_LEGEND["changed"], 1.0).x) == [10]
    assert list(_trace(figure, style.DIFF_LEGEND["a_only"], 2.0).x) == [4, 13, 14]
    assert list(_trace(figure, style.DIFF_LEGEND["b_only"], 1.0).x) == [5]
    line = next(s for s in figure.layout.shapes if s.type == "line")
    assert line.x0 == line.x1 == 3.5
    assert "a seq 4, b seq 4" in figure.layout.annotations[0].text
    bands = [(s.x0, s.x1) for s in figure.layout.shapes if s.type == "rect"]
    assert bands == [(3.5, 5.5), (9.5, 10.5), (12.5, 14.5)]


def test_ledger_text_is_escaped(tmp_path: Path) -> None:
    figure = lv.diff_timeline(_pair(tmp_path))
    texts = [figure.layout.title.text, *figure.layout.yaxis.ticktext,
             *(str(text) for trace in figure.data for text in trace.hovertext)]
    assert not any("<img" in text for text in texts)
    assert any("&lt;img src=x" in text for text in texts)


def test_the_same_sessions_draw_no_divergence(tmp_path: Path) -> None:
    header, events = example("clean.jsonl")
    path = write(tmp_path / "a.jsonl", header, events)
    figure = lv.timeline(lv.diff(path, path))
    assert [s for s in figure.layout.shapes] == []
    assert [t.name for t in figure.data] == [style.DIFF_LEGEND["same"]] * 2
    assert "the same" in figure.layout.title.text
