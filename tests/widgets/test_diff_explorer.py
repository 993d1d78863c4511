"""``lv.explore(diff)``: the diff explorer's picker, panes and figure clicks."""

from __future__ import annotations

from pathlib import Path

from plotly.callbacks import Points

import ledgerviz as lv
from ledgerviz.simulate.examples import bundled_examples_dir
from ledgerviz.widgets import DiffExplorer
from tests.compare.pairs import example, write

FORK = bundled_examples_dir() / "resume-fork"


def test_the_picker_lists_the_differing_rows_and_opens_on_the_first() -> None:
    explorer = lv.explore(lv.diff(FORK / "parent.jsonl", FORK / "child.jsonl"))
    assert isinstance(explorer, DiffExplorer)
    # 18 equal rows, then the parent's seqs 18-21 (from the fork point), the child's 18-20
    # (its seed marker and forked closers) and its turn 3 (seqs 21-38): 25 differing rows
    assert [value for _, value in explorer.row.options] == list(range(18, 43))
    assert explorer.row.value == 18
    assert "seq 18 · assistant/message" in explorer.a_event.value
    assert "no event on this side" in explorer.b_event.value
    assert "a seq 18" in explorer.summary.value


def test_picking_a_row_shows_its_events_and_a_click_picks_its_row() -> None:
    explorer = lv.explore(lv.diff(FORK / "parent.jsonl", FORK / "child.jsonl"))
    explorer.row.value = 22  # the child's seed marker
    assert "no event on this side" in explorer.a_event.value
    assert "seq 18 · session/end-seed" in explorer.b_event.value
    explorer._on_click(None, Points(point_inds=[0], xs=[3.0], ys=[2.0], trace_name="",
                                    trace_index=0), None)
    assert "seq 3 · user/message" in explorer.a_event.value  # an equal row, not in the picker
    assert "seq 3 · user/message" in explorer.b_event.value
    assert explorer.row.value == 22


def test_ledger_text_is_escaped(tmp_path: Path) -> None:
    header, events = example("clean.jsonl")
    hostile = "<script>alert(1)</script>"
    other = [dict(event) for event in events]
    other[3] = {**other[3], "data": {**other[3]["data"], "content": [
        {"type": "text", "text": hostile}]}}
    explorer = lv.explore(lv.diff(write(tmp_path / "a.jsonl", header, events),
                                  write(tmp_path / "b.jsonl", {**header, "id": hostile}, other)))
    assert explorer.row.value == 3
    shown = explorer.b_event.value + explorer.summary.value
    assert "<script>" not in shown
    assert "&lt;script&gt;" in explorer.b_event.value
