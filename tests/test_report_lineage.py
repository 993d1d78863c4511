"""The report groups sessions by lineage and, under the fork policy, draws a parent with its
fork child as one story.

Expected values worked out by hand from ``examples/resume-fork``: ``child.jsonl`` (39 events,
seqs 0-38) is the fork of ``parent.jsonl`` (22 events, seqs 0-21) at boundary seq 17; its
``session/end-seed`` marker is seq 18, an event only the child has.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

import ledgerviz
from ledgerviz.api import Ledger
from ledgerviz.report import page as report
from ledgerviz.report import render_report
from ledgerviz.report import sessions as report_sessions
from ledgerviz.report.anchors import session_anchor
from ledgerviz.report.lineage import grouped_trees
from ledgerviz.report.sessions import LedgerFiles

EXAMPLES = Path(ledgerviz.__file__).parent / "examples"
TESTS = Path(__file__).resolve().parent
PAIR = EXAMPLES / "resume-fork"
PARENT, CHILD = "sim-resume-fork-7", "sim-resume-fork-7-fork"
DRAW = report._Drawing.draw
READ = report_sessions._read


def child_first() -> Ledger:
    return ledgerviz.load([PAIR / "child.jsonl", PAIR / "parent.jsonl"])


def figure(page: str, index: int | str) -> dict[str, Any]:
    match = re.search(rf'<script type="application/json" id="figure-{index}">(.*?)</script>', page)
    assert match is not None
    return json.loads(match.group(1))


def hover_heads(spec: dict[str, Any]) -> list[str]:
    return [str(h).split("<br>")[0] for trace in spec["data"]
            for h in (trace.get("hovertext") or []) if h]


def event_seqs(spec: dict[str, Any]) -> set[float]:
    lane = spec["layout"]["yaxis"]["tickvals"][spec["layout"]["yaxis"]["ticktext"].index("events")]
    return {x for trace in spec["data"] for x, y in zip(trace.get("x") or [], trace.get("y") or [],
                                                         strict=True)
            if y == lane and x is not None}


def test_the_child_section_follows_its_parent() -> None:
    page = render_report(child_first(), "synthesize", packed=False)
    assert re.findall(r"<h2 title=\"[^\"]*\">Session ([^<]*)</h2>", page) == [PARENT, CHILD]
    assert re.findall(r'<section class="session" id="([^"]*)">', page) == [
        session_anchor(PARENT), session_anchor(CHILD)]
    assert re.findall(r'<a href="#([^"]*)"', page) == [  # overview: file order
        session_anchor(CHILD), session_anchor(PARENT)]


def test_under_fork_the_parent_is_drawn_with_its_child() -> None:
    page = render_report(child_first(), "fork", packed=False)
    parent = figure(page, 1)
    assert "<b>session/end-seed</b> · seq 18" in hover_heads(parent)
    assert max(event_seqs(parent)) == 38  # the child's last event, past the parent's 21
    assert "abandoned events" in parent["layout"]["yaxis"]["ticktext"]
    assert f"drawn with its fork child <b>{CHILD}</b>" in page
    child = figure(page, 0)  # the child's own section still draws the child alone
    assert "abandoned events" not in child["layout"]["yaxis"]["ticktext"]


def test_other_policies_draw_the_parent_alone() -> None:
    parent = figure(render_report(child_first(), "synthesize", packed=False), 1)
    assert "<b>session/end-seed</b> · seq 18" not in hover_heads(parent)
    assert 38 not in event_seqs(parent)  # the child's last event is not drawn here


def test_a_fork_child_id_is_escaped() -> None:
    parent = ledgerviz.load(EXAMPLES / "crash-mid-dispatch.jsonl")
    hostile = "x<script>alert(1)</script>"
    child = parent.fork(session_id=hostile, created_at=0)
    page = render_report(Ledger([*parent.sessions, *child.sessions]), "fork", packed=False)
    assert "<script>alert(1)" not in page
    assert "drawn with its fork child <b>x&lt;script&gt;alert(1)&lt;/script&gt;</b>" in page


def test_grouped_trees_are_depth_first_and_survive_missing_parents_and_cycles() -> None:
    lineage = pd.DataFrame({
        "session": ["c1", "root", "gc", "orphan", "a", "b", "c2"],
        "parent_session": ["root", None, "c1", "gone", "b", "a", "root"],
    })
    # root, its children c1 (then c1's child gc) and c2; orphan keeps its place; the a/b
    # cycle is broken at a, met first in ledger order
    assert grouped_trees(lineage) == [[1, 0, 2, 6], [3], [4, 5]]


def test_a_parent_with_two_fork_children_draws_one_story_per_child() -> None:
    parent = ledgerviz.load(EXAMPLES / "crash-mid-dispatch.jsonl")
    first = parent.fork(session_id="kid-a", created_at=0).sessions[0]
    second = parent.fork(at=21, session_id="kid-b", created_at=0).sessions[0]
    page = render_report(Ledger([*parent.sessions, first, second]), "fork", packed=False)
    assert "drawn with its fork children <b>kid-a</b>, <b>kid-b</b>" in page
    for name, child in (("0", first), ("0-1", second)):  # the parent's section, one per child
        story = figure(page, name)
        assert max(event_seqs(story)) == child.events[-1]["seq"]  # the child's last event
    assert figure(page, 1) and figure(page, 2)  # each child's own section draws it alone
    assert 'id="figure-1-1"' not in page and 'id="figure-0-2"' not in page


def test_batches_gather_whole_trees_until_they_hold_enough_events(monkeypatch) -> None:
    monkeypatch.setattr(report_sessions, "BATCH_EVENTS", 10)
    trees = [[0, 1], [2], [3, 4], [5]]
    sizes = [4, 7, 3, 2, 20, 1]
    # 4 + 7 >= 10 ends the first batch; 3, then 3 + 2 + 20: the tree [3, 4] is not split
    assert list(report_sessions.batches(trees, sizes)) == [[0, 1], [2, 3, 4], [5]]


def test_a_report_drawn_in_batches_is_the_report_drawn_at_once(monkeypatch) -> None:
    paths = [*sorted(EXAMPLES.glob("*.jsonl")), PAIR / "child.jsonl", PAIR / "parent.jsonl"]
    at_once = render_report(ledgerviz.load(paths), "fork", packed=False)
    assert "drawn with its fork child" in at_once
    monkeypatch.setattr(report_sessions, "BATCH_EVENTS", 1)  # every lineage tree a batch
    drawn: list[list[int]] = []
    read: list[str] = []

    def recorded_draw(self: Any, batch: list[int], step: Any) -> None:
        drawn.append(list(batch))
        DRAW(self, batch, step)

    def recorded_read(found: Any, step: Any, format: str | None) -> Any:
        read.append(found.path)
        return READ(found, step, format)

    monkeypatch.setattr(report._Drawing, "draw", recorded_draw)
    monkeypatch.setattr(report_sessions, "_read", recorded_read)
    for sessions in (ledgerviz.load(paths), LedgerFiles.read(paths)):
        drawn.clear()
        assert render_report(sessions, "fork", packed=False) == at_once
        assert len(drawn) == len(paths) - 1  # the fork child shares its parent's batch
        assert [len(batch) for batch in drawn].count(2) == 1
    assert sorted(read) == sorted(map(str, paths + paths))  # files: read, then per batch


def test_files_holding_one_batch_are_read_once(monkeypatch) -> None:
    paths = sorted(EXAMPLES.glob("*.jsonl"))
    read: list[str] = []

    def recorded_read(found: Any, step: Any, format: str | None) -> Any:
        read.append(found.path)
        return READ(found, step, format)

    monkeypatch.setattr(report_sessions, "_read", recorded_read)
    files = LedgerFiles.read(paths)
    assert sum(files.sizes) <= report_sessions.BATCH_EVENTS
    page = render_report(files, packed=False)
    assert read == list(map(str, paths))
    assert page == render_report(ledgerviz.load(paths), packed=False)


def test_the_lineage_of_files_read_for_a_report_is_the_loaded_files(tmp_path: Path) -> None:
    # a seed marker without a seq counts as its position, 5: the events before it must stay
    unnumbered = tmp_path / "unnumbered-marker.jsonl"
    lines = [{"type": "session", "version": 4, "id": "unnumbered"},
             *({"type": "turn/start", "seq": seq, "data": {"turn": seq}} for seq in range(5)),
             {"type": "session/end-seed", "data": {"inherited": True}}]
    unnumbered.write_text("".join(json.dumps(line) + "\n" for line in lines))
    paths = sorted([*EXAMPLES.rglob("*.jsonl"), *(TESTS / "data" / "dsh").glob("*.jsonl")])
    lineage = LedgerFiles.read([*paths, unnumbered]).lineage
    assert lineage["relation"].astype(str).nunique() > 2  # roots, forks and subagents
    assert lineage["inherited_events"].iloc[-1] == 5
    pd.testing.assert_frame_equal(lineage, ledgerviz.load([*paths, unnumbered]).frames.lineage)
